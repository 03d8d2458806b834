import { sql, z, type Queryable } from '@gw/db';

const LogId = z.object({ id: z.number() });

/**
 * Policy-log ids taken from the sequence a block at a time (one round trip per block, not per
 * batch). Ids must increase along a partition's chain: a block whose next id is not above the
 * chain's last id (another process wrote the partition with later ids) is dropped for a new one,
 * which is above every id handed out before. Unused ids are gaps, as after a rolled-back insert.
 */
export class LogIdBlock {
  private ids: number[] = [];
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly blockSize: number) {}

  take(db: Queryable, count: number, above: number): Promise<number[]> {
    if (count === 0) return Promise.resolve([]);
    // One caller at a time: partitions of one process share the block.
    const taken = this.turn.then(async () => {
      if (this.ids.length > 0 && this.ids[0]! <= above) this.ids = [];
      if (this.ids.length < count) {
        const ids = await db.anyFirst(sql.type(LogId)`SELECT nextval('policy_log_log_id_seq') AS id FROM generate_series(1, ${Math.max(this.blockSize, count)})`);
        // Sorted here, as numbers: the rows come in no promised order.
        this.ids = [...ids].sort((a, b) => a - b);
      }
      return this.ids.splice(0, count);
    });
    this.turn = taken.catch(() => undefined);
    return taken;
  }
}
