CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"env" text NOT NULL,
	"name" text,
	"secret_hash" text NOT NULL,
	"hint" text NOT NULL,
	"scopes" jsonb,
	"allowed_models" jsonb,
	"monthly_quota" bigint,
	"rpm" integer,
	"tpm" integer,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "custom_models" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"base_model" text NOT NULL,
	"system" text,
	"defaults" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "holds" (
	"id" text PRIMARY KEY NOT NULL,
	"request_id" text NOT NULL,
	"wallet_id" text NOT NULL,
	"account_id" text,
	"key_id" text,
	"user_id" text,
	"amount" bigint NOT NULL,
	"model" text NOT NULL,
	"route" text NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"closed_at" timestamp with time zone,
	CONSTRAINT "holds_amount_not_negative" CHECK ("holds"."amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "ledger_entries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"kind" text NOT NULL,
	"amount" bigint NOT NULL,
	"wallet_id" text NOT NULL,
	"payer_type" text NOT NULL,
	"account_id" text,
	"key_id" text,
	"user_sub" text,
	"env" text,
	"request_id" text,
	"hold_id" text,
	"model" text,
	"route" text,
	"usage" jsonb,
	"uncollected" bigint DEFAULT 0 NOT NULL,
	"idempotency_key" text,
	"note" text
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"issuer" text NOT NULL,
	"subject" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallets" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"owner_id" text NOT NULL,
	"balance" bigint DEFAULT 0 NOT NULL,
	"held" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "wallets_held_not_negative" CHECK ("wallets"."held" >= 0),
	CONSTRAINT "wallets_available_not_negative" CHECK ("wallets"."balance" >= "wallets"."held")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_models" ADD CONSTRAINT "custom_models_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_wallet_id_wallets_id_fk" FOREIGN KEY ("wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_wallet_id_wallets_id_fk" FOREIGN KEY ("wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_secret_hash" ON "api_keys" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "api_keys_account" ON "api_keys" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "custom_models_name" ON "custom_models" USING btree ("account_id","name");--> statement-breakpoint
CREATE INDEX "holds_open_expiry" ON "holds" USING btree ("expires_at") WHERE "holds"."status" = 'open';--> statement-breakpoint
CREATE INDEX "holds_open_key" ON "holds" USING btree ("key_id") WHERE "holds"."status" = 'open';--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_idempotency" ON "ledger_entries" USING btree ("wallet_id","idempotency_key") WHERE "ledger_entries"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "ledger_account" ON "ledger_entries" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "ledger_key" ON "ledger_entries" USING btree ("key_id","id");--> statement-breakpoint
CREATE INDEX "ledger_user" ON "ledger_entries" USING btree ("user_sub","id");--> statement-breakpoint
CREATE INDEX "ledger_request" ON "ledger_entries" USING btree ("request_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_identity" ON "users" USING btree ("issuer","subject");--> statement-breakpoint
CREATE UNIQUE INDEX "wallets_owner" ON "wallets" USING btree ("kind","owner_id");