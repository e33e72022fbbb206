/** Exit codes of the commands that write from a file, beyond 0 (done), 1 (a fault) and 2 (bad arguments). */
export const EXIT_INVALID_FILE = 3;
export const EXIT_CONFLICT = 4;
