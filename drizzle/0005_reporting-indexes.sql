DROP INDEX "api_keys_account";--> statement-breakpoint
CREATE INDEX "accounts_created" ON "accounts" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "api_keys_account_created" ON "api_keys" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE INDEX "api_keys_created" ON "api_keys" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "users_created" ON "users" USING btree ("created_at","id");