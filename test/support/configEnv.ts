/**
 * An Effect `ConfigProvider` over exactly the given variables (nothing of this process's), shaped as
 * `ConfigProvider.fromEnv` reads them: `EFFECT_BASH_GRACE_MS` is the path `EFFECT_BASH` / `GRACE_MS`
 * a `Config` nests into.
 */
import { ConfigProvider } from "effect"

export const envConfigProvider = (env: Readonly<Record<string, string>>): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" })
