CREATE TABLE "request_activity" (
	"request_id" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"method" text NOT NULL,
	"route" text NOT NULL,
	"status" integer NOT NULL,
	"error_code" text,
	"account_id" text,
	"key_id" text,
	"user_sub" text,
	"model_requested" text,
	"model" text,
	"attempts" jsonb NOT NULL,
	"tokens" jsonb,
	"cost" bigint NOT NULL,
	"duration_ms" double precision NOT NULL,
	"session_id" text
);
--> statement-breakpoint
CREATE INDEX "request_activity_created" ON "request_activity" USING btree ("created_at","request_id");--> statement-breakpoint
CREATE INDEX "request_activity_account" ON "request_activity" USING btree ("account_id","created_at","request_id");--> statement-breakpoint
CREATE INDEX "request_activity_key" ON "request_activity" USING btree ("key_id","created_at","request_id");