/**
 * A setting the engine cannot run with. `setting` names it (`bundling.maxOperations`), `problem`
 * says what is wrong; neither ever holds a secret's value.
 */
export class BundlerConfigError extends Error {
  override name = "BundlerConfigError";
  readonly setting: string;
  readonly problem: string;
  constructor(setting: string, problem: string) {
    super(`${setting} ${problem}`);
    this.setting = setting;
    this.problem = problem;
  }
}
