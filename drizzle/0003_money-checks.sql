-- NOT VALID: the checks bind every new ledger row at once without failing the migration on a
-- database that already recorded a negative charge (an upstream's negative usage, before these
-- checks existed); `select * from ledger_entries where kind <> 'adjustment' and amount < 0` finds them.
ALTER TABLE "holds" ADD CONSTRAINT "holds_amount_bounded" CHECK ("holds"."amount" <= 1000000000000000);--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_amount_signed_by_kind" CHECK ("ledger_entries"."kind" = 'adjustment' or "ledger_entries"."amount" >= 0) NOT VALID;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_uncollected_not_negative" CHECK ("ledger_entries"."uncollected" >= 0) NOT VALID;