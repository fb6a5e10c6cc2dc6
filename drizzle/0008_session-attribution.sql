ALTER TABLE "holds" ADD COLUMN "session_id" text;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "session_id" text;--> statement-breakpoint
ALTER TABLE "usage_rollups" ADD COLUMN "session_id" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_rollups" DROP CONSTRAINT "usage_rollups_hour_account_id_key_id_user_sub_model_pk";--> statement-breakpoint
ALTER TABLE "usage_rollups" ADD CONSTRAINT "usage_rollups_hour_account_id_key_id_user_sub_model_session_id_pk" PRIMARY KEY("hour","account_id","key_id","user_sub","model","session_id");--> statement-breakpoint
CREATE INDEX "ledger_session" ON "ledger_entries" USING btree ("session_id","id") WHERE "ledger_entries"."session_id" is not null;
