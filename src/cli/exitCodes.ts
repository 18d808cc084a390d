/**
 * The exit codes (sysexits, as systemd and cron expect); main.ts maps each failure to one of
 * them in one table:
 * 0 mirror matches · 1 some items failed · 64 usage · 70 software (a defect in dlsync,
 * never an expected failure) · 75 temporary (service unreachable, another instance holds
 * the lock, the emulator's port in use) · 77 authentication needed · 78 configuration (also
 * a missing root, an unusable server.listen, no state for `status`). The README's table
 * says the same.
 */
export const ExitCode = {
  ok: 0,
  itemsFailed: 1,
  usage: 64,
  software: 70,
  temporary: 75,
  auth: 77,
  config: 78
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]
