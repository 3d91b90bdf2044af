/**
 * Background work done every so often (a sweep): one round at a time, the next `everyMs` after the
 * last one ended, give or take `jitter`, so that rounds never overlap and processes started
 * together drift apart instead of sweeping the same documents at the same moment. `stop` waits
 * for the round under way, so that nothing runs on once its owner has stopped (the database
 * clients close next).
 */
export interface PeriodicOptions {
  readonly everyMs: number;
  /** The share of `everyMs` each wait varies by, either way: 0.1 waits 90–110 % of it. */
  readonly jitter?: number;
  /** Whether the first round runs at start rather than one wait later. */
  readonly atStart?: boolean;
  /** Told of a round that threw; the next round comes as usual, or after `afterFailureMs`. */
  readonly failed: (error: unknown) => void;
  /** Set: a round that threw is followed by the next this soon (a rare round left for later can't wait `everyMs`). */
  readonly afterFailureMs?: number;
}

const DEFAULT_JITTER = 0.1;

export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private started = false;

  constructor(
    private readonly work: () => Promise<unknown>,
    private readonly options: PeriodicOptions,
  ) {}

  /** Whether rounds are due: started and not stopped since. */
  get running(): boolean {
    return this.started;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.options.atStart) void this.runNow();
    else this.scheduleNext();
  }

  /** Runs a round now, unless one is under way (that one is awaited instead). */
  runNow(): Promise<void> {
    let threw = false;
    this.round ??= this.work()
      .then(
        () => undefined,
        (error: unknown) => {
          threw = true;
          this.options.failed(error);
        },
      )
      .finally(() => {
        this.round = undefined;
        this.scheduleNext(threw ? this.options.afterFailureMs : undefined);
      });
    return this.round;
  }

  /** No more rounds; resolves once the round under way, if any, has ended. */
  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.round;
  }

  private scheduleNext(everyMs = this.options.everyMs): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.started) return;
    const jitter = this.options.jitter ?? DEFAULT_JITTER;
    const wait = everyMs * (1 + jitter * (2 * Math.random() - 1));
    this.timer = setTimeout(() => void this.runNow(), wait);
    this.timer.unref();
  }
}
