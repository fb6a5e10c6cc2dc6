DROP INDEX "holds_expiry";--> statement-breakpoint
DROP INDEX "holds_instance";--> statement-breakpoint
ALTER TABLE "holds" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "holds" DROP COLUMN "closed_at";