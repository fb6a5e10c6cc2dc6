import { type TObject, type TString, Type } from '@sinclair/typebox'

/** A path's `:id`, described by what it names and how its ids start (`acct_…`), as the API document shows it. */
export function idParam(what: string, prefix: string): TObject<{ id: TString }> {
  return Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: `The ${what}'s id (\`${prefix}_…\`)` }) })
}
