/** The embedded data directory, or the Postgres server and database: never the user, the password or the URL. */
export function describeDatabase(config: { databaseUrl: string | undefined; dataDir: string }): Record<string, string | number> {
  // The path as configured (relative stays relative): what the operator wrote is what they recognise.
  if (!config.databaseUrl) return { engine: 'embedded', path: config.dataDir }
  try {
    const url = new URL(config.databaseUrl)
    const name = decodeURIComponent(url.pathname.slice(1))
    return { engine: 'postgres', host: url.hostname, port: Number(url.port || 5432), ...(name ? { name } : {}) }
  } catch {
    // The driver takes forms a URL parser refuses (several hosts); naming the engine is enough then.
    return { engine: 'postgres' }
  }
}
