import type { ResolvedConfig } from "../../shared/config.js";
import { stateDirs } from "../../shared/paths.js";
import type { IndexStore, OpenStoreOptions } from "./types.js";

/**
 * Opens the configured backend's index of one project. Backends other than the default load on
 * demand, so the local path never pays for the PostgreSQL client or LanceDB's native module.
 */
export async function openStore(cfg: ResolvedConfig, opts: OpenStoreOptions): Promise<IndexStore> {
  const s = cfg.store;
  switch (s.backend) {
    case "local": {
      const { LocalStore } = await import("./local.js");
      return LocalStore.open(stateDirs(cfg.root).dbFile, opts);
    }
    case "postgres": {
      const { PostgresStore } = await import("./postgres.js");
      return PostgresStore.open(s, opts);
    }
    case "lancedb": {
      const { LanceStore } = await import("./lance.js");
      return LanceStore.open(stateDirs(cfg.root).lanceDir, opts);
    }
  }
}
