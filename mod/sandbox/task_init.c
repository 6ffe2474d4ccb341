/*
 * gurt's task init: the first process of a task's sandbox, its pid 1.
 *
 *   task-init PLACE SOCKET [PLACE SOCKET]... -- PROGRAM ARG...
 *
 * The sandbox has its own network namespace, with only `lo`. For each pair, task-init listens on
 * PLACE: 127.0.0.1:PLACE for a port number, or a Unix socket at PLACE for a path (which it
 * replaces), and relays each connection, byte for byte, to the Unix socket SOCKET (a door of the
 * core, bound into the sandbox): that is how the egress proxy appears on the task's loopback and
 * the broker socket at BOX_SOCKET. At most MAX_RELAYS connections of one door are relayed at once;
 * past that it accepts no more of that door's until one ends (they wait in the listen queue), so a
 * task cannot hold more of the core's descriptors than that, however many it opens. It makes itself
 * non-dumpable, so the task's processes (its uid, no capability) cannot ptrace it. Before anything
 * else it closes every descriptor past 2 (those `gurt serve` inherited without close-on-exec would
 * otherwise reach every process of the task) and opens /dev/null on any of 0, 1 and 2 that is
 * closed: the worker starts with those three only. Every listener is open before PROGRAM starts, so
 * the worker's first request never finds the port closed. Then it runs PROGRAM as execvp(3) would
 * (searched in the PATH of its environment) in a child, relays connections, reaps every process of
 * the namespace (orphans come to pid 1), and exits with PROGRAM's status (128 + the signal's number
 * when a signal ended it). Its exit ends the namespace: the kernel kills every process left.
 *
 * It is not a boundary: it runs as the task's user, and a task that kills or replaces it only
 * loses its own doors. The boundary is what the sandbox lets it see: the core's sockets are the
 * only things outside it may reach.
 *
 * If it cannot start, it writes `gurt-task-init: errno NNN` (and what failed) to stderr and exits
 * 127. No libc, no dynamic loader, so it runs in any sandbox. Built by tools/build_task_init.sh
 * into task_init_elf.ts; a test rebuilds it and fails if the checked-in bytes differ. x86-64 Linux.
 */

#define SYS_read 0
#define SYS_write 1
#define SYS_open 2
#define SYS_close 3
#define SYS_poll 7
#define SYS_rt_sigprocmask 14
#define SYS_socket 41
#define SYS_connect 42
#define SYS_shutdown 48
#define SYS_bind 49
#define SYS_listen 50
#define SYS_setsockopt 54
#define SYS_fork 57
#define SYS_execve 59
#define SYS_exit 60
#define SYS_wait4 61
#define SYS_fcntl 72
#define SYS_unlink 87
#define SYS_prctl 157
#define SYS_getdents64 217
#define SYS_exit_group 231
#define SYS_accept4 288
#define SYS_signalfd4 289
#define SYS_close_range 436

#define EINTR 4
#define EBADF 9
#define ENOENT 2
#define ENOEXEC 8
#define EACCES 13
#define EFAULT 14
#define EINVAL 22
#define ENOTDIR 20
#define EAGAIN 11

#define AF_UNIX 1
#define AF_INET 2
#define SOCK_STREAM 1
#define SOCK_CLOEXEC 02000000
#define SOL_SOCKET 1
#define SO_REUSEADDR 2
#define SHUT_WR 1
#define POLLIN 0x001
#define POLLOUT 0x004
#define POLLERR 0x008
#define POLLHUP 0x010
#define WNOHANG 1
#define SIGCHLD 17
#define SIG_BLOCK 0
#define SIG_SETMASK 2
#define SFD_CLOEXEC 02000000
#define O_RDONLY 0
#define O_RDWR 2
#define O_DIRECTORY 0200000
#define O_CLOEXEC 02000000
#define F_GETFD 1

#define MAX_DOORS 4
#define MAX_RELAYS 64
#define PR_SET_DUMPABLE 4
#define BUFFER 65536

struct pollfd {
  int fd;
  short events;
  short revents;
};

static long syscall5(long number, long a, long b, long c, long d, long e) {
  long result;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return result;
}

static long syscall4(long number, long a, long b, long c, long d) {
  return syscall5(number, a, b, c, d, 0);
}

static long syscall3(long number, long a, long b, long c) {
  return syscall4(number, a, b, c, 0);
}

static void quit(long status) __attribute__((noreturn));
static void quit(long status) {
  for (;;) syscall3(SYS_exit_group, status, 0, 0);
}

static long length_of(const char *text) {
  long n = 0;
  while (text[n] != 0) n++;
  return n;
}

static void fail(const char *what, long error) __attribute__((noreturn));
static void fail(const char *what, long error) {
  char line[] = {'g', 'u', 'r', 't', '-', 't', 'a', 's', 'k', '-', 'i', 'n', 'i', 't',
                 ':', ' ', 'e', 'r', 'r', 'n', 'o', ' ', '0', '0', '0', ' '};
  line[22] = (char)('0' + error / 100 % 10);
  line[23] = (char)('0' + error / 10 % 10);
  line[24] = (char)('0' + error % 10);
  syscall3(SYS_write, 2, (long)line, sizeof line);
  syscall3(SYS_write, 2, (long)what, length_of(what));
  syscall3(SYS_write, 2, (long)"\n", 1);
  quit(127);
}

/* Writes all of `length` bytes; false when the peer is gone. */
static int write_all(int fd, const char *data, long length) {
  while (length > 0) {
    long n = syscall3(SYS_write, fd, (long)data, length);
    if (n == -EINTR) continue;
    if (n <= 0) return 0;
    data += n;
    length -= n;
  }
  return 1;
}

/* Relays one connection both ways until both directions are closed; never returns. */
static void relay(int client, const char *path) __attribute__((noreturn));
static void relay(int client, const char *path) {
  struct {
    unsigned short family;
    char path[108];
  } address;
  long path_length = length_of(path);
  if (path_length >= (long)sizeof address.path) quit(1);
  address.family = AF_UNIX;
  for (long i = 0; i <= path_length; i++) address.path[i] = path[i];
  long door = syscall3(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (door < 0) quit(1);
  if (syscall3(SYS_connect, door, (long)&address, 2 + path_length + 1) < 0) quit(1);
  static char buffer[BUFFER];
  int fds[2] = {client, (int)door};
  int open[2] = {1, 1}; /* whether each side still sends */
  while (open[0] || open[1]) {
    struct pollfd watch[2];
    int count = 0;
    int which[2];
    for (int i = 0; i < 2; i++) {
      if (!open[i]) continue;
      watch[count].fd = fds[i];
      watch[count].events = POLLIN;
      watch[count].revents = 0;
      which[count++] = i;
    }
    long ready = syscall3(SYS_poll, (long)watch, count, -1);
    if (ready == -EINTR) continue;
    if (ready < 0) quit(1);
    for (int k = 0; k < count; k++) {
      if (watch[k].revents == 0) continue;
      int from = which[k];
      int to = 1 - from;
      long n = syscall3(SYS_read, fds[from], (long)buffer, BUFFER);
      if (n == -EINTR || n == -EAGAIN) continue;
      if (n <= 0) {
        open[from] = 0;
        syscall3(SYS_shutdown, fds[to], SHUT_WR, 0);
        continue;
      }
      if (!write_all(fds[to], buffer, n)) quit(0);
    }
  }
  quit(0);
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

/* Runs the program as execvp would; never returns. */
static void exec_program(char **argv, long argc, char **envp) __attribute__((noreturn));
static void exec_program(char **argv, long argc, char **envp) {
  const char *name = argv[0];
  long name_length = length_of(name);
  int has_slash = 0;
  for (long i = 0; i < name_length; i++) has_slash |= name[i] == '/';
  if (name_length == 0) fail("no program", ENOENT);
  if (has_slash) fail(name, run(name, argv, argc, envp));
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  for (char **entry = envp; *entry != 0; entry++) {
    const char *e = *entry;
    if (e[0] == 'P' && e[1] == 'A' && e[2] == 'T' && e[3] == 'H' && e[4] == '=') {
      path = e + 5;
      break;
    }
  }
  char candidate[4096];
  long last = ENOENT;
  for (const char *start = path;;) {
    const char *end = start;
    while (*end != 0 && *end != ':') end++;
    long dir_length = end - start;
    long length = dir_length + (dir_length > 0) + name_length;
    if (length < (long)sizeof candidate) {
      long at = 0;
      for (const char *c = start; c < end; c++) candidate[at++] = *c;
      if (dir_length > 0) candidate[at++] = '/';
      for (long i = 0; i < name_length; i++) candidate[at++] = name[i];
      candidate[at] = 0;
      long error = run(candidate, argv, argc, envp);
      if (error != ENOENT && error != ENOTDIR) last = error;
    }
    if (*end == 0) break;
    start = end + 1;
  }
  fail(name, last);
}

/*
 * Opens /dev/null on each of 0, 1 and 2 that is closed (bubblewrap closes 0 once it has read the
 * init from it), so that the worker's first open never lands there.
 */
static void open_standard(void) {
  for (int fd = 0; fd < 3; fd++) {
    if (syscall3(SYS_fcntl, fd, F_GETFD, 0) >= 0) continue;
    long null = syscall3(SYS_open, (long)"/dev/null", O_RDWR, 0);
    if (null < 0) fail("/dev/null", -null);
    if (null != fd) fail("/dev/null", EBADF);
  }
}

/* The number a /proc/self/fd entry names; -1 for "." and "..". */
static long fd_number(const char *name) {
  long value = 0;
  if (*name == 0) return -1;
  for (; *name != 0; name++) {
    if (*name < '0' || *name > '9') return -1;
    value = value * 10 + (*name - '0');
  }
  return value;
}

/*
 * Closes every descriptor past 2: those the sandbox's maker inherited without close-on-exec, which
 * would reach the worker and every process it starts. close_range(2) where the kernel has it (5.9
 * and later); else each one /proc/self/fd lists, until a pass finds none (a loop up to the
 * open-files limit would miss one numbered past it: lowering the limit closes nothing). Fails when
 * neither can be done.
 */
static void close_inherited(void) {
  if (syscall3(SYS_close_range, 3, ~0U, 0) == 0) return;
  for (;;) {
    long dir = syscall3(SYS_open, (long)"/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (dir < 0) fail("/proc/self/fd", -dir);
    long closed = 0;
    for (;;) {
      static char entries[4096] __attribute__((aligned(8)));
      long n = syscall3(SYS_getdents64, dir, (long)entries, sizeof entries);
      if (n < 0) fail("/proc/self/fd", -n);
      if (n == 0) break;
      for (long at = 0; at < n;) {
        /* struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name. */
        unsigned short length = *(unsigned short *)(entries + at + 16);
        long fd = fd_number(entries + at + 19);
        at += length;
        if (fd < 3 || fd == dir) continue;
        syscall3(SYS_close, fd, 0, 0);
        closed++;
      }
    }
    syscall3(SYS_close, dir, 0, 0);
    if (closed == 0) return;
  }
}

static long parse_port(const char *text) {
  long value = 0;
  if (*text == 0) return -1;
  for (; *text != 0; text++) {
    if (*text < '0' || *text > '9') return -1;
    value = value * 10 + (*text - '0');
    if (value > 65535) return -1;
  }
  return value == 0 ? -1 : value;
}

/* Listens on a Unix socket at `path`, replacing what is there; the listener's fd. */
static int listen_at(const char *path) {
  struct {
    unsigned short family;
    char path[108];
  } address;
  long path_length = length_of(path);
  if (path_length >= (long)sizeof address.path) fail(path, 36 /* ENAMETOOLONG */);
  address.family = AF_UNIX;
  for (long i = 0; i <= path_length; i++) address.path[i] = path[i];
  syscall3(SYS_unlink, (long)path, 0, 0);
  long fd = syscall3(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket", -fd);
  long error = syscall3(SYS_bind, fd, (long)&address, 2 + path_length + 1);
  if (error < 0) fail(path, -error);
  error = syscall3(SYS_listen, fd, 128, 0);
  if (error < 0) fail("listen", -error);
  return (int)fd;
}

/* Listens on 127.0.0.1:port; the listener's fd. */
static int listen_on(long port) {
  struct {
    unsigned short family;
    unsigned short port;
    unsigned char address[4];
    unsigned char zero[8];
  } address = {AF_INET, (unsigned short)((port >> 8) | ((port & 0xff) << 8)), {127, 0, 0, 1},
               {0, 0, 0, 0, 0, 0, 0, 0}};
  long fd = syscall3(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket", -fd);
  int one = 1;
  syscall5(SYS_setsockopt, fd, SOL_SOCKET, SO_REUSEADDR, (long)&one, sizeof one);
  long error = syscall3(SYS_bind, fd, (long)&address, sizeof address);
  if (error < 0) fail("bind 127.0.0.1", -error);
  error = syscall3(SYS_listen, fd, 128, 0);
  if (error < 0) fail("listen", -error);
  return (int)fd;
}

void init_main(long *stack) __attribute__((noreturn, used));
void init_main(long *stack) {
  long argc = stack[0];
  char **argv = (char **)stack + 1;
  char **envp = argv + argc + 1;
  int listeners[MAX_DOORS];
  const char *doors[MAX_DOORS];
  int count = 0;
  long at = 1;
  syscall3(SYS_prctl, PR_SET_DUMPABLE, 0, 0);
  open_standard();
  close_inherited();
  while (at < argc && !(argv[at][0] == '-' && argv[at][1] == '-' && argv[at][2] == 0)) {
    if (at + 1 >= argc || count == MAX_DOORS) fail("usage: PLACE SOCKET ... -- PROGRAM", EINVAL);
    if (argv[at][0] == '/') {
      listeners[count] = listen_at(argv[at]);
    } else {
      long port = parse_port(argv[at]);
      if (port < 0) fail(argv[at], EINVAL);
      listeners[count] = listen_on(port);
    }
    doors[count++] = argv[at + 1];
    at += 2;
  }
  if (at + 1 >= argc) fail("usage: PLACE SOCKET ... -- PROGRAM", EINVAL);
  /* The relays running now: each one's pid and door (0 for a free slot). */
  long relay_pid[MAX_DOORS * MAX_RELAYS];
  int relay_door[MAX_DOORS * MAX_RELAYS];
  int relays[MAX_DOORS];
  for (int i = 0; i < MAX_DOORS * MAX_RELAYS; i++) relay_pid[i] = 0;
  for (int i = 0; i < MAX_DOORS; i++) relays[i] = 0;
  char **program = argv + at + 1;
  long program_argc = argc - at - 1;

  /* SIGCHLD is read from a signalfd, never delivered: the poll below wakes for it. */
  unsigned long chld = 1UL << (SIGCHLD - 1);
  unsigned long old_mask = 0;
  syscall4(SYS_rt_sigprocmask, SIG_BLOCK, (long)&chld, (long)&old_mask, 8);
  long signals = syscall4(SYS_signalfd4, -1, (long)&chld, 8, SFD_CLOEXEC);
  if (signals < 0) fail("signalfd", -signals);

  long worker = syscall3(SYS_fork, 0, 0, 0);
  if (worker < 0) fail("fork", -worker);
  if (worker == 0) {
    syscall4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old_mask, 0, 8);
    exec_program(program, program_argc, envp);
  }

  struct pollfd watch[MAX_DOORS + 1];
  for (;;) {
    watch[0].fd = (int)signals;
    watch[0].events = POLLIN;
    watch[0].revents = 0;
    for (int i = 0; i < count; i++) {
      /* A door at its cap is not watched (a negative fd): its connections wait in the queue. */
      watch[i + 1].fd = relays[i] < MAX_RELAYS ? listeners[i] : -1;
      watch[i + 1].events = POLLIN;
      watch[i + 1].revents = 0;
    }
    long ready = syscall3(SYS_poll, (long)watch, count + 1, -1);
    if (ready == -EINTR) continue;
    if (ready < 0) fail("poll", -ready);
    if (watch[0].revents != 0) {
      char info[128];
      syscall3(SYS_read, signals, (long)info, sizeof info);
      for (;;) {
        int status = 0;
        long pid = syscall4(SYS_wait4, -1, (long)&status, WNOHANG, 0);
        if (pid <= 0) break;
        if (pid == worker) {
          int signal = status & 0x7f;
          quit(signal == 0 ? (status >> 8) & 0xff : 128 + signal);
        }
        for (int i = 0; i < MAX_DOORS * MAX_RELAYS; i++) {
          if (relay_pid[i] != pid) continue;
          relay_pid[i] = 0;
          relays[relay_door[i]]--;
          break;
        }
      }
    }
    for (int i = 0; i < count; i++) {
      if (watch[i + 1].revents == 0) continue;
      long client = syscall4(SYS_accept4, listeners[i], 0, 0, SOCK_CLOEXEC);
      if (client < 0) continue;
      long pid = syscall3(SYS_fork, 0, 0, 0);
      if (pid == 0) {
        syscall4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old_mask, 0, 8);
        relay((int)client, doors[i]);
      }
      syscall3(SYS_close, client, 0, 0);
      if (pid < 0) continue;
      for (int k = 0; k < MAX_DOORS * MAX_RELAYS; k++) {
        if (relay_pid[k] != 0) continue;
        relay_pid[k] = pid;
        relay_door[k] = i;
        relays[i]++;
        break;
      }
    }
  }
}

/* The kernel enters here with argc at the top of the stack. */
__asm__(".globl _start\n"
        "_start:\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call init_main\n");
