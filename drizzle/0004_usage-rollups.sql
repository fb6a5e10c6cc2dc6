CREATE TABLE "usage_rollups" (
	"hour" timestamp with time zone NOT NULL,
	"account_id" text DEFAULT '' NOT NULL,
	"key_id" text DEFAULT '' NOT NULL,
	"user_sub" text DEFAULT '' NOT NULL,
	"model" text DEFAULT '' NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"input_tokens" numeric DEFAULT '0' NOT NULL,
	"output_tokens" numeric DEFAULT '0' NOT NULL,
	"cache_read_tokens" numeric DEFAULT '0' NOT NULL,
	"cache_write_tokens" numeric DEFAULT '0' NOT NULL,
	"cost" numeric DEFAULT '0' NOT NULL,
	"uncollected" numeric DEFAULT '0' NOT NULL,
	CONSTRAINT "usage_rollups_hour_account_id_key_id_user_sub_model_pk" PRIMARY KEY("hour","account_id","key_id","user_sub","model")
);
--> statement-breakpoint
CREATE INDEX "usage_rollups_key" ON "usage_rollups" USING btree ("key_id","hour");--> statement-breakpoint
CREATE INDEX "usage_rollups_account" ON "usage_rollups" USING btree ("account_id","hour");--> statement-breakpoint
-- The rollup of every charge recorded before this table existed; from here on the statements
-- that write charges keep it (src/billing/usage-rollup.ts has the same token count).
INSERT INTO "usage_rollups" ("hour", "account_id", "key_id", "user_sub", "model", "requests", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost", "uncollected")
SELECT date_trunc('hour', "created_at", 'UTC'), coalesce("account_id", ''), coalesce("key_id", ''), coalesce("user_sub", ''), coalesce("model", ''), count(*),
  sum(CASE WHEN jsonb_typeof("usage"->'input_tokens') = 'number' THEN (CASE WHEN ("usage"->>'input_tokens')::numeric >= 0 AND ("usage"->>'input_tokens')::numeric = trunc(("usage"->>'input_tokens')::numeric) THEN ("usage"->>'input_tokens')::numeric ELSE 0 END) ELSE 0 END),
  sum(CASE WHEN jsonb_typeof("usage"->'output_tokens') = 'number' THEN (CASE WHEN ("usage"->>'output_tokens')::numeric >= 0 AND ("usage"->>'output_tokens')::numeric = trunc(("usage"->>'output_tokens')::numeric) THEN ("usage"->>'output_tokens')::numeric ELSE 0 END) ELSE 0 END),
  sum(CASE WHEN jsonb_typeof("usage"->'cache_read_tokens') = 'number' THEN (CASE WHEN ("usage"->>'cache_read_tokens')::numeric >= 0 AND ("usage"->>'cache_read_tokens')::numeric = trunc(("usage"->>'cache_read_tokens')::numeric) THEN ("usage"->>'cache_read_tokens')::numeric ELSE 0 END) ELSE 0 END),
  sum(CASE WHEN jsonb_typeof("usage"->'cache_write_tokens') = 'number' THEN (CASE WHEN ("usage"->>'cache_write_tokens')::numeric >= 0 AND ("usage"->>'cache_write_tokens')::numeric = trunc(("usage"->>'cache_write_tokens')::numeric) THEN ("usage"->>'cache_write_tokens')::numeric ELSE 0 END) ELSE 0 END),
  sum("amount"), sum("uncollected")
FROM "ledger_entries" WHERE "kind" = 'charge'
GROUP BY 1, 2, 3, 4, 5;
