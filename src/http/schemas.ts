import { type IntegerOptions, Type } from '@sinclair/typebox'
import { t } from 'elysia'

/** Shapes shared by more than one group of endpoints. */
export const BalanceSchema = t.Object({ balance: t.Number(), held: t.Number(), available: t.Number() })

/**
 * A whole number in a JSON body, and only a JSON number. Elysia's `t.Integer` also takes a
 * string of digits and converts it (it is made for query strings), and its range errors lose
 * the field's name; the counts that size a hold are refused as the providers refuse them: a
 * string is 400 invalid_request naming the field.
 */
export const JsonInteger = (options: IntegerOptions) => Type.Integer(options)
