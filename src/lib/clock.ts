/** The service's notion of now; tests and delayed work swap it for a controllable one. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

export const unixSeconds = (clock: Clock): number => Math.floor(clock.nowMs() / 1000);
