/** What `run` answers: its value, or the name of the error it throws (to compare a shortcut with its reference, errors included). */
export function outcome<T>(run: () => T): T | string {
  try {
    return run();
  } catch (error) {
    return (error as Error).name;
  }
}
