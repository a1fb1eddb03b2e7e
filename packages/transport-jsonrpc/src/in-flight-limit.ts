/** How a connection stops and restarts reading from its client. */
export interface PausableConnection {
  pause(): void;
  resume(): void;
}

/**
 * At most `max` requests of one connection at a time. Past that, requests wait their turn in
 * arrival order and the connection stops reading until the queue is empty and a slot is free: a
 * client that pipelines thousands of requests is read no faster than it is answered, so its
 * requests neither pile up in memory nor crowd out other clients'.
 */
export interface InFlightLimit {
  /** Run `task` (handle one request and send its answer) now, or once a slot frees. */
  run(task: () => Promise<unknown>): void;
}

export function createInFlightLimit(max: number, connection: PausableConnection): InFlightLimit {
  let active = 0;
  let paused = false;
  const waiting: (() => Promise<unknown>)[] = [];

  function start(task: () => Promise<unknown>) {
    active++;
    const done = () => {
      active--;
      const next = waiting.shift();
      if (next) start(next);
      else if (paused) {
        paused = false;
        connection.resume();
      }
    };
    task().then(done, done);
  }

  return {
    run(task) {
      if (active < max) return start(task);
      waiting.push(task);
      if (!paused) {
        paused = true;
        connection.pause();
      }
    },
  };
}
