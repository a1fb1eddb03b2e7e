// A process of its own for migrations.test.ts: opens the mempool and reputation stores on the
// database argv[2] names (a SQLite file, or a postgres:// URL) once its stdin says go. Both at
// once, each on its own connection (SQLite) or pool (PostgreSQL), so that with other such
// processes several connections migrate one new database at the same moment. Prints "ready",
// then "opened" or the error's first line.
import {
  createPostgresMempoolStore,
  createPostgresReputationStore,
  createSqliteMempoolStore,
  createSqliteReputationStore,
} from "../src/index.ts";

const database = process.argv[2]!;
const onPostgres = database.startsWith("postgres://");
process.stdout.write("ready\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.destroy();
try {
  const stores = await Promise.all(
    onPostgres
      ? [
          createPostgresMempoolStore({ connectionString: database }),
          createPostgresReputationStore({ connectionString: database }),
        ]
      : [
          createSqliteMempoolStore({ filename: database }),
          createSqliteReputationStore({ filename: database }),
        ],
  );
  for (const store of stores) await store.close();
  process.stdout.write("opened\n");
} catch (error) {
  process.stdout.write(`${(error as Error).message.split("\n")[0]}\n`);
  process.exitCode = 1;
}
