CREATE TABLE "quota_defaults" (
	"scope" text PRIMARY KEY NOT NULL,
	"day_quota" bigint,
	"week_quota" bigint,
	"month_quota" bigint
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "day_quota" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "week_quota" bigint;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "week" text;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "day" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "day_quota" bigint;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "week_quota" bigint;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "month_quota" bigint;