import { CodememError } from "../../shared/errors.js";
import { log } from "../../shared/log.js";
import type { BuildProgress } from "./build.js";
import type { Builder } from "./builder.js";

/** A build asked for and not yet started; a cancelled one never starts. */
interface Ticket {
  owner?: number;
  cancelled: boolean;
  /** Answers the waiting client BUILD_CANCELLED now; the ticket is skipped when its turn comes. */
  withdraw: () => void;
}

const notStarted = () => new CodememError("BUILD_CANCELLED", "The build was cancelled before it started; the index is as it was.");

/**
 * A project's builds, one at a time, each for the client that asked (its pid): that client's Ctrl-C
 * finds its build whether it runs or still waits behind another (a watch batch's, a daemon's
 * catch-up build), and a daemon's stop ends them all.
 */
export class BuildQueue {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly waiting = new Set<Ticket>();
  /** The client whose build runs now, if a client asked for it. */
  private runningOwner?: number;
  /** The running build's phase, for `codemem build`'s progress bar (via the daemon's status). */
  progress?: BuildProgress & { started_at: string };

  constructor(private readonly builder: Builder) {}

  /** Runs `job` after the builds queued before it; `report` records its progress for the status. */
  run<T>(owner: number | undefined, job: (report: (p: BuildProgress) => void) => Promise<T>): Promise<T> {
    let withdraw!: () => void;
    const withdrawn = new Promise<never>((_, reject) => (withdraw = () => reject(notStarted())));
    withdrawn.catch(() => {});
    const ticket: Ticket = { owner, cancelled: false, withdraw };
    this.waiting.add(ticket);
    const run = this.chain.then(async () => {
      this.waiting.delete(ticket);
      if (ticket.cancelled) throw notStarted();
      this.runningOwner = owner;
      try {
        return await job((p) => (this.progress = { ...p, started_at: this.progress?.started_at ?? new Date().toISOString() }));
      } finally {
        this.progress = undefined;
        this.runningOwner = undefined;
      }
    });
    this.chain = run.catch(() => {});
    return Promise.race([run, withdrawn]);
  }

  /**
   * Stops a build before its write (the index stays as it was). With `owner`, that client's build:
   * one still waiting never starts, a running one stops; another client's build is left alone.
   * Without, the running build. False when there is none, or it is already writing.
   */
  cancel(owner?: number): boolean {
    if (owner === undefined) return this.builder.cancel();
    const queued = [...this.waiting].filter((t) => t.owner === owner && !t.cancelled);
    for (const t of queued) this.withdraw(t);
    const running = this.runningOwner === owner && this.builder.cancel();
    return queued.length > 0 || running;
  }

  private withdraw(t: Ticket): void {
    t.cancelled = true;
    t.withdraw();
  }

  /**
   * The daemon stops: builds waiting never start; the running one may finish within `graceMs` (its
   * client gets its answer), else it is stopped (Builder.abort) and its client told so.
   */
  async stop(graceMs: number): Promise<void> {
    for (const t of this.waiting) this.withdraw(t);
    this.builder.windDown?.();
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([this.chain.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs)))]);
    clearTimeout(timer);
    if (!finished) {
      log.info("stopping the running build: the daemon stops", { grace_ms: graceMs });
      this.builder.abort?.();
    }
  }

  /** Resolves once every build queued so far has ended. */
  settled(): Promise<unknown> {
    return this.chain;
  }
}
