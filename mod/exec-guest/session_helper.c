/*
 * gurt's session helper: `setsid-helper PROGRAM ARG...` makes itself the leader of a new session
 * (so of a new process group), then runs PROGRAM as execvp(3) would: searched in the PATH of the
 * environment it was given (default "/bin:/usr/bin"), and a file the kernel will not execute
 * (ENOEXEC) run with /bin/sh. The environment passes through unchanged.
 *
 * It exists because the guest must start each exec in its own process group, and both ways Deno
 * offers cost more than the spawn itself: `detached: true` forks the whole daemon, and util-linux
 * setsid is one more dynamically linked exec. This program has no libc and no dynamic loader.
 *
 * If setsid() fails, or no candidate could be executed, it writes `gurt-setsid: errno NNN` and a
 * newline to stderr and exits 127; the guest reads that as "the program did not start".
 *
 * Before it runs PROGRAM it leaves a watcher behind (fork twice, so the watcher is no child of
 * PROGRAM's and no `wait` of PROGRAM's waits for it): a process in a group of its own that holds a
 * pidfd of the guest (its parent) and one of PROGRAM, closes the standard streams and polls. If the
 * guest dies first, however it dies (SIGKILL included), the watcher sends SIGKILL to PROGRAM's
 * whole process group, and the exec dies with its guest rather than outlive its time limit. Once
 * PROGRAM has exited, it watches on while anything of the group is left, re-checking every second,
 * and then exits. No watcher is left where the guest is its pid namespace's init (the kernel
 * kills the namespace with it) or the kernel has no pidfd_open (before Linux 5.3).
 *
 * Built by tools/build_session_helper.sh into session_helper_elf.ts; a test rebuilds it and
 * fails if the checked-in bytes differ. x86-64 Linux only.
 */

#define SYS_write 1
#define SYS_close 3
#define SYS_poll 7
#define SYS_getpid 39
#define SYS_fork 57
#define SYS_execve 59
#define SYS_exit 60
#define SYS_wait4 61
#define SYS_kill 62
#define SYS_setpgid 109
#define SYS_getppid 110
#define SYS_setsid 112
#define SYS_pidfd_open 434

#define SIGKILL 9
#define POLLIN 1
#define EINTR 4
#define ESRCH 3

#define ENOENT 2
#define ENOEXEC 8
#define EACCES 13
#define EFAULT 14
#define ENODEV 19
#define ENOTDIR 20
#define ENAMETOOLONG 36
#define ESTALE 116
#define ETIMEDOUT 110

static long syscall3(long number, long a, long b, long c) {
  long result;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a), "S"(b), "d"(c)
                   : "rcx", "r11", "memory");
  return result;
}

static long syscall4(long number, long a, long b, long c, long d) {
  long result;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return result;
}

static void fail(long error) __attribute__((noreturn));
static void fail(long error) {
  char line[] = {'g', 'u', 'r', 't', '-', 's', 'e', 't', 's', 'i', 'd', ':',
                 ' ', 'e', 'r', 'r', 'n', 'o', ' ', '0', '0', '0', '\n'};
  line[19] = (char)('0' + error / 100 % 10);
  line[20] = (char)('0' + error / 10 % 10);
  line[21] = (char)('0' + error % 10);
  syscall3(SYS_write, 2, (long)line, sizeof line);
  for (;;) syscall3(SYS_exit, 127, 0, 0);
}

struct pollfd {
  int fd;
  short events;
  short revents;
};

/* The watcher's life: returns when the exec's group is gone, or after it was killed. */
static void watch(long guest, long exec, long group) {
  struct pollfd fds[2] = {{(int)guest, POLLIN, 0}, {(int)exec, POLLIN, 0}};
  long count = 2;
  for (;;) {
    long ready = syscall3(SYS_poll, (long)fds, count, count == 2 ? -1 : 1000);
    if (ready < 0 && ready != -EINTR) return;
    if (fds[0].revents != 0) {
      syscall3(SYS_kill, -group, SIGKILL, 0);
      return;
    }
    if (count == 2 && fds[1].revents != 0) count = 1;
    if (count == 1 && syscall3(SYS_kill, -group, 0, 0) == -ESRCH) return;
  }
}

/* Leaves the watcher (see the top of this file); the caller goes on to run the program. */
static void leave_watcher(void) {
  long guest_pid = syscall3(SYS_getppid, 0, 0, 0);
  if (guest_pid <= 1) return;
  long guest = syscall3(SYS_pidfd_open, guest_pid, 0, 0);
  if (guest < 0) return;
  long group = syscall3(SYS_getpid, 0, 0, 0);
  long exec = syscall3(SYS_pidfd_open, group, 0, 0);
  if (exec < 0 || syscall3(SYS_getppid, 0, 0, 0) != guest_pid) {
    /* No pidfd of itself, or the guest died before its pidfd was taken: nothing to wait for. */
    if (exec >= 0) syscall3(SYS_close, exec, 0, 0);
    syscall3(SYS_close, guest, 0, 0);
    return;
  }
  long middle = syscall3(SYS_fork, 0, 0, 0);
  if (middle == 0) {
    if (syscall3(SYS_fork, 0, 0, 0) == 0) {
      syscall3(SYS_setpgid, 0, 0, 0);
      for (long fd = 0; fd < 3; fd++) syscall3(SYS_close, fd, 0, 0);
      watch(guest, exec, group);
    }
    for (;;) syscall3(SYS_exit, 0, 0, 0);
  }
  if (middle > 0) {
    /* Both pidfds are close-on-exec: the program never holds them. */
    int status;
    while (syscall4(SYS_wait4, middle, (long)&status, 0, 0) == -EINTR) {
    }
  }
  syscall3(SYS_close, exec, 0, 0);
  syscall3(SYS_close, guest, 0, 0);
}

/* execve; on ENOEXEC, the file as a /bin/sh script (as execvp does). Returns the errno. */
static long run(const char *file, char **argv, long argc, char **envp) {
  long error = -syscall3(SYS_execve, (long)file, (long)argv, (long)envp);
  if (error != ENOEXEC) return error;
  char *script[argc + 2];
  script[0] = "/bin/sh";
  script[1] = (char *)file;
  for (long i = 1; i <= argc; i++) script[i + 1] = argv[i];
  syscall3(SYS_execve, (long)script[0], (long)script, (long)envp);
  return ENOEXEC;
}

void helper_main(long *stack) __attribute__((noreturn, used));
void helper_main(long *stack) {
  long argc = stack[0] - 1;           /* the program's own argc */
  char **argv = (char **)stack + 2;   /* the program's argv, NULL-terminated */
  char **envp = argv + argc + 1;
  long sid = syscall3(SYS_setsid, 0, 0, 0);
  if (sid < 0) fail(-sid);
  if (argc < 1) fail(EFAULT);
  leave_watcher();
  const char *name = argv[0];
  long name_length = 0;
  int has_slash = 0;
  for (; name[name_length] != 0; name_length++) has_slash |= name[name_length] == '/';
  if (name_length == 0) fail(ENOENT);
  if (has_slash) fail(run(name, argv, argc, envp));

  const char *path = "/bin:/usr/bin";
  for (char **entry = envp; *entry != 0; entry++) {
    const char *e = *entry;
    if (e[0] == 'P' && e[1] == 'A' && e[2] == 'T' && e[3] == 'H' && e[4] == '=') {
      path = e + 5;
      break;
    }
  }
  char candidate[4096];
  int denied = 0;
  long last = ENOENT;
  for (const char *start = path;;) {
    const char *end = start;
    while (*end != 0 && *end != ':') end++;
    long dir_length = end - start;
    /* An empty entry is the current directory: the name as it is. */
    long length = dir_length + (dir_length > 0) + name_length;
    if (length < (long)sizeof candidate) {
      long at = 0;
      for (const char *c = start; c < end; c++) candidate[at++] = *c;
      if (dir_length > 0) candidate[at++] = '/';
      for (long i = 0; i < name_length; i++) candidate[at++] = name[i];
      candidate[at] = 0;
      long error = run(candidate, argv, argc, envp);
      if (error == EACCES) {
        denied = 1;
      } else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ENODEV &&
                 error != ETIMEDOUT) {
        fail(error);
      }
    } else {
      last = ENAMETOOLONG;
    }
    if (*end == 0) break;
    start = end + 1;
  }
  fail(denied ? EACCES : last);
}

/* The kernel enters here with argc at the top of the stack. */
__asm__(".globl _start\n"
        "_start:\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call helper_main\n");
