CREATE TABLE "idempotent_calls" (
	"scope" text NOT NULL,
	"path" text NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"state" text NOT NULL,
	"request_id" text NOT NULL,
	"owner" text NOT NULL,
	"lease_until" timestamp with time zone NOT NULL,
	"status" integer,
	"content_type" text,
	"body" "bytea",
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotent_calls_scope_path_key_pk" PRIMARY KEY("scope","path","key"),
	CONSTRAINT "idempotent_calls_key_length" CHECK (length("idempotent_calls"."key") between 1 and 255)
);
--> statement-breakpoint
CREATE INDEX "idempotent_calls_expires" ON "idempotent_calls" USING btree ("expires_at");