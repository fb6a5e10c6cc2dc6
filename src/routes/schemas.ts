import { t } from 'elysia'

/** Shapes shared by more than one route group. */
export const BalanceSchema = t.Object({ balance: t.Number(), held: t.Number(), available: t.Number() })
