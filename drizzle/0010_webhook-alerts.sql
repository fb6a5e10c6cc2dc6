CREATE TABLE "balance_alerts" (
	"wallet_id" text PRIMARY KEY NOT NULL,
	"threshold" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "quota_alerts" (
	"scope" text NOT NULL,
	"subject_id" text NOT NULL,
	"period" text NOT NULL,
	"period_start" text NOT NULL,
	"percent" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "quota_alerts_scope_subject_id_period_period_start_percent_pk" PRIMARY KEY("scope","subject_id","period","period_start","percent")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"webhook_id" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"claim_token" text,
	"claimed_until" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	CONSTRAINT "webhook_deliveries_webhook_id_event_id_pk" PRIMARY KEY("webhook_id","event_id")
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"events" jsonb NOT NULL,
	"description" text,
	"secret" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "low_balance_threshold" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "low_balance_threshold" bigint;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_list" ON "webhook_deliveries" USING btree ("webhook_id","created_at","event_id");--> statement-breakpoint
CREATE INDEX "webhooks_created" ON "webhooks" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "accounts_low_balance" ON "accounts" USING btree ("id") WHERE "accounts"."low_balance_threshold" is not null;--> statement-breakpoint
CREATE INDEX "api_keys_low_balance" ON "api_keys" USING btree ("id") WHERE "api_keys"."low_balance_threshold" is not null;--> statement-breakpoint
CREATE INDEX "api_keys_monthly_quota" ON "api_keys" USING btree ("id") WHERE "api_keys"."monthly_quota" is not null;