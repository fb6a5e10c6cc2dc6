CREATE TABLE "key_spend" (
	"key_id" text NOT NULL,
	"month" text NOT NULL,
	"charged" bigint DEFAULT 0 NOT NULL,
	"held" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "key_spend_key_id_month_pk" PRIMARY KEY("key_id","month")
);
--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "payer_type" text NOT NULL;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "user_sub" text;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "env" text;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "instance_id" text NOT NULL;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "month" text NOT NULL;