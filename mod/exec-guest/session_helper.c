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
 * `setsid-helper --gurt-watch` (that one word, nothing after it) is the guest's watcher instead:
 * see watch_main. The guest starts it once and tells it every exec's process group, so that the
 * execs die with the guest, however the guest dies, SIGKILL included.
 *
 * Built by tools/build_session_helper.sh into session_helper_elf.ts; a test rebuilds it and
 * fails if the checked-in bytes differ. x86-64 Linux only.
 */

#define SYS_read 0
#define SYS_write 1
#define SYS_open 2
#define SYS_close 3
#define SYS_poll 7
#define SYS_getpid 39
#define SYS_execve 59
#define SYS_exit 60
#define SYS_kill 62
#define SYS_getppid 110
#define SYS_setsid 112
#define SYS_getdents64 217
#define SYS_pidfd_send_signal 424
#define SYS_pidfd_open 434

#define SIGKILL 9
#define O_RDONLY 0
#define O_DIRECTORY 0200000
#define O_CLOEXEC 02000000
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

/* The groups the watcher holds: the leader's pidfd while it lives (-1 after), and the group. */
#define MAX_GROUPS 1020
static int leaders[MAX_GROUPS];
static long groups[MAX_GROUPS];
static long held;

/* The guest's mark, "GURT_GUEST_EXEC=<random>", as the guest gave it to the watcher and to every
   exec's environment; null if it gave none. */
static const char *mark;
static long mark_length;

struct dirent64 {
  unsigned long inode;
  long offset;
  unsigned short length;
  unsigned char type;
  char name[];
};

static char environ_text[256 * 1024];

/* Whether /proc/PID/environ (PID as text) holds the mark as one whole entry. */
static int marked(const char *pid) {
  char path[32] = "/proc/";
  long at = 6;
  for (const char *c = pid; *c != 0 && at < 20; c++) path[at++] = *c;
  const char *tail = "/environ";
  for (long i = 0; tail[i] != 0; i++) path[at++] = tail[i];
  path[at] = 0;
  long fd = syscall3(SYS_open, (long)path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return 0;
  long size = 0;
  for (;;) {
    long count = syscall3(SYS_read, fd, (long)environ_text + size, sizeof environ_text - size);
    if (count <= 0) break;
    size += count;
  }
  syscall3(SYS_close, fd, 0, 0);
  for (long start = 0; start < size;) {
    long end = start;
    while (end < size && environ_text[end] != 0) end++;
    if (end - start == mark_length) {
      long i = 0;
      while (i < mark_length && environ_text[start + i] == mark[i]) i++;
      if (i == mark_length) return 1;
    }
    start = end + 1;
  }
  return 0;
}

/* SIGKILL to every process whose environment holds the mark (it was started by an exec, and
   kept the environment, even if it left the exec's group); returns how many. */
static long kill_marked(void) {
  static char entries[8192];
  long killed = 0;
  long self = syscall3(SYS_getpid, 0, 0, 0);
  long dir = syscall3(SYS_open, (long)"/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (dir < 0) return 0;
  for (;;) {
    long count = syscall3(SYS_getdents64, dir, (long)entries, sizeof entries);
    if (count <= 0) break;
    for (long at = 0; at < count;) {
      struct dirent64 *entry = (struct dirent64 *)(entries + at);
      at += entry->length;
      long pid = 0;
      const char *c = entry->name;
      for (; *c >= '0' && *c <= '9'; c++) pid = pid * 10 + (*c - '0');
      if (*c != 0 || pid <= 1 || pid == self) continue;
      if (marked(entry->name)) {
        syscall3(SYS_kill, pid, SIGKILL, 0);
        killed++;
      }
    }
  }
  syscall3(SYS_close, dir, 0, 0);
  return killed;
}

/* SIGKILL to every group held, and to each leader still alive (by its pidfd, which no reused pid
   can be mistaken for), then to what carries the guest's mark, then exit: the guest is gone. */
static void kill_all(void) __attribute__((noreturn));
static void kill_all(void) {
  for (long i = 0; i < held; i++) {
    syscall3(SYS_kill, -groups[i], SIGKILL, 0);
    if (leaders[i] >= 0) syscall4(SYS_pidfd_send_signal, leaders[i], SIGKILL, 0, 0);
  }
  /* Again while the sweep finds any: a process may have forked while it was looked for. */
  for (long pass = 0; mark != 0 && pass < 8 && kill_marked() > 0; pass++) {
  }
  for (;;) syscall3(SYS_exit, 0, 0, 0);
}

static void hold(long group) {
  if (group <= 1 || held == MAX_GROUPS) return;
  long leader = syscall3(SYS_pidfd_open, group, 0, 0);
  /* A leader already gone and reaped: held only while anything of its group is left. */
  if (leader < 0 && syscall3(SYS_kill, -group, 0, 0) == -ESRCH) return;
  leaders[held] = (int)leader;
  groups[held] = group;
  held++;
}

/*
 * `setsid-helper --gurt-watch`, started once by the guest, stdin a pipe from it: reads the
 * process group of each exec the guest starts, one decimal number a line, and holds it. When the
 * guest dies (its pidfd is readable) or closes the pipe, every group held gets SIGKILL. A group is
 * let go once its leader has exited and nothing of the group is left (re-checked every second):
 * until then its id cannot be reused, so no other group is ever killed. Given the guest's mark in
 * its environment (GURT_GUEST_EXEC, which the guest puts in every exec's too), it then also kills
 * every process whose /proc/PID/environ holds that entry: what an exec moved out of its group
 * (setsid) but that kept its environment.
 */
static void watch_main(char **envp) __attribute__((noreturn));
static void watch_main(char **envp) {
  const char *name = "GURT_GUEST_EXEC=";
  for (char **entry = envp; *entry != 0 && mark == 0; entry++) {
    long i = 0;
    while (name[i] != 0 && (*entry)[i] == name[i]) i++;
    if (name[i] == 0 && (*entry)[i] != 0) mark = *entry;
  }
  while (mark != 0 && mark[mark_length] != 0) mark_length++;
  long guest_pid = syscall3(SYS_getppid, 0, 0, 0);
  long guest = syscall3(SYS_pidfd_open, guest_pid, 0, 0);
  if (guest < 0 || syscall3(SYS_getppid, 0, 0, 0) != guest_pid) kill_all();
  struct pollfd fds[MAX_GROUPS + 2];
  char buffer[512];
  long number = 0;
  for (;;) {
    fds[0] = (struct pollfd){(int)guest, POLLIN, 0};
    fds[1] = (struct pollfd){0, POLLIN, 0};
    int orphans = 0;
    for (long i = 0; i < held; i++) {
      fds[i + 2] = (struct pollfd){leaders[i], POLLIN, 0};
      orphans |= leaders[i] < 0;
    }
    long ready = syscall3(SYS_poll, (long)fds, held + 2, orphans ? 1000 : -1);
    if (ready < 0 && ready != -EINTR) kill_all();
    if (ready < 0) continue;
    if (fds[0].revents != 0) kill_all();
    long before = held;
    if (fds[1].revents != 0) {
      long count = syscall3(SYS_read, 0, (long)buffer, sizeof buffer);
      if (count <= 0 && count != -EINTR) kill_all();
      for (long i = 0; i < count; i++) {
        char c = buffer[i];
        if (c >= '0' && c <= '9') {
          number = number * 10 + (c - '0');
          if (number > 0x7fffffff) number = 0x7fffffff;
        } else {
          if (c == '\n') hold(number);
          number = 0;
        }
      }
    }
    for (long i = 0; i < before; i++) {
      if (leaders[i] >= 0 && fds[i + 2].revents != 0) {
        syscall3(SYS_close, leaders[i], 0, 0);
        leaders[i] = -1;
      }
    }
    for (long i = 0; i < held;) {
      if (leaders[i] < 0 && syscall3(SYS_kill, -groups[i], 0, 0) == -ESRCH) {
        held--;
        leaders[i] = leaders[held];
        groups[i] = groups[held];
      } else {
        i++;
      }
    }
  }
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
  const char *watch = "--gurt-watch";
  int watching = argc == 1;
  for (long i = 0; watching && (i == 0 || watch[i - 1] != 0); i++) watching = argv[0][i] == watch[i];
  if (watching) watch_main(envp);
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
