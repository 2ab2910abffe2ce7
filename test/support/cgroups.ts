import { forgetGroup, groupCgroup, spawnInGroup } from '../../src/core/processGroups';

/** Whether a host started from here may make cgroups (src/core/processGroups.ts): a probe spawn's group got one. */
export function cgroupsHere(cwd: string): boolean {
  const probe = spawnInGroup('true', [], { cwd, env: process.env, stdio: ['ignore', 'ignore', 'ignore'] });
  const has = probe.pid !== undefined && groupCgroup(probe.pid) !== undefined;
  if (probe.pid !== undefined) forgetGroup(probe.pid);
  return has;
}
