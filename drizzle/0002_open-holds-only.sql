ALTER TABLE "holds" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "holds" DROP COLUMN "closed_at";