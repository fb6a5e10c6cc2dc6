import { and, eq } from 'drizzle-orm'
import type { Database } from '../db/database'
import { customModels, type RequestDefaults } from '../db/schema'
import { newId } from '../util/ids'
import { isStorableText } from '../util/storable-text'

export type CustomModelRow = typeof customModels.$inferSelect

export const CUSTOM_PREFIX = 'custom/'

export interface NewCustomModel {
  accountId: string
  name: string
  baseModel: string
  system?: string
  defaults?: RequestDefaults
}

/** Per-account models `custom/<name>`: a base model with a system prompt and default parameters. */
export class CustomModelStore {
  constructor(private readonly db: Database) {}

  /** Undefined when the account already has a model of that name. */
  async create(input: NewCustomModel): Promise<CustomModelRow | undefined> {
    const [row] = await this.db
      .insert(customModels)
      .values({
        id: newId('cm'),
        accountId: input.accountId,
        name: input.name,
        baseModel: input.baseModel,
        system: input.system ?? null,
        defaults: input.defaults ?? null,
      })
      .onConflictDoNothing()
      .returning()
    return row
  }

  async listForAccount(accountId: string): Promise<CustomModelRow[]> {
    return this.db.select().from(customModels).where(eq(customModels.accountId, accountId)).orderBy(customModels.name)
  }

  /**
   * `modelId` is the public id, `custom/<name>`, as a client sent it. One with a NUL character
   * names no model (none can be stored so) and would fail the query: it is simply not found.
   */
  async find(accountId: string, modelId: string): Promise<CustomModelRow | undefined> {
    if (!modelId.startsWith(CUSTOM_PREFIX) || !isStorableText(modelId)) return undefined
    const name = modelId.slice(CUSTOM_PREFIX.length)
    const [row] = await this.db
      .select()
      .from(customModels)
      .where(and(eq(customModels.accountId, accountId), eq(customModels.name, name)))
    return row
  }
}
