CREATE TABLE "key_spend" (
	"key_id" text NOT NULL,
	"month" text NOT NULL,
	"charged" bigint DEFAULT 0 NOT NULL,
	"held" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "key_spend_key_id_month_pk" PRIMARY KEY("key_id","month")
);
--> statement-breakpoint
ALTER TABLE "holds" DROP CONSTRAINT "holds_wallet_id_wallets_id_fk";
--> statement-breakpoint
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_wallet_id_wallets_id_fk";
--> statement-breakpoint
DROP INDEX "holds_open_expiry";--> statement-breakpoint
DROP INDEX "holds_open_key";--> statement-breakpoint
DROP INDEX "ledger_account";--> statement-breakpoint
DROP INDEX "ledger_key";--> statement-breakpoint
DROP INDEX "ledger_user";--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "payer_type" text NOT NULL;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "user_sub" text;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "env" text;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "instance_id" text NOT NULL;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "month" text NOT NULL;--> statement-breakpoint
CREATE INDEX "holds_expiry" ON "holds" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "holds_instance" ON "holds" USING btree ("instance_id");--> statement-breakpoint
CREATE INDEX "ledger_account" ON "ledger_entries" USING btree ("account_id","id") WHERE "ledger_entries"."account_id" is not null;--> statement-breakpoint
CREATE INDEX "ledger_key" ON "ledger_entries" USING btree ("key_id","id") WHERE "ledger_entries"."key_id" is not null;--> statement-breakpoint
CREATE INDEX "ledger_user" ON "ledger_entries" USING btree ("user_sub","id") WHERE "ledger_entries"."user_sub" is not null;