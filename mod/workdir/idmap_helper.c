/*
 * gurt's id-map helper: mounts the owner's folder for one task, id-mapped, at a staging path.
 *
 *   idmap-helper SOURCE TARGET GRANT_PATH TASK_UID TASK_GID RO [EMPTY_FILE EMPTY_DIR]
 *
 * Run as root by the core (mod/workdir/idmap.ts). It opens GRANT_PATH and SOURCE with openat2 and
 * RESOLVE_NO_SYMLINKS (no component of either path may be a link, so nothing the folder's owner or
 * a task put there can send the mount elsewhere), checks that both are directories, that the grant
 * path's owner is not root and that SOURCE has the same owner, then makes a user namespace whose
 * only mapping is that owner -> TASK_UID and SOURCE's group -> TASK_GID, clones the
 * opened folder's mount (open_tree, not recursive: what is mounted below the folder is not shown),
 * gives the clone that id-mapping with nosuid and nodev (and read-only when RO is 1), and moves it
 * to TARGET. Through that mount the owner's files are the task's user's, a file the task's user
 * makes is the owner's on disk, and every other user's file belongs to no one the task may be (it
 * shows as 65534 and cannot be changed through the mount, nor created as).
 *
 * With EMPTY_FILE and EMPTY_DIR it then writes `mounted` and a newline on stdout, reads lines
 * `KIND REL` on stdin until its end (the core lists the folder through the mount meanwhile, and
 * sends what to cover), and lays each cover over the mount, read-only, nosuid and nodev, for
 * bubblewrap's recursive bind to carry in: for each KIND REL (REL relative to the folder, reached with no link
 * followed and never above it), `f` binds the mount's own REL read-only (a protected path), `e` and
 * `E` bind EMPTY_FILE or EMPTY_DIR over an existing REL (a covered .env file or folder), and `F` and
 * `D` first make REL as an empty file or folder of the owner's (its missing parents too), then bind
 * EMPTY_FILE or EMPTY_DIR over it (a protected path that is missing, so the task cannot make it),
 * and `p` pins the folder REL (made as the owner's where missing) with a writable clone of itself:
 * a mount point cannot be renamed or removed, so the folder above a protected path (`.git`) cannot
 * be moved aside for one without it.
 *
 * On failure it writes `gurt-idmap: STEP errno NNN` to stderr and exits 1; a SOURCE that is not a
 * directory of the grant path owner's exits 2 (its owner's uid as the errno), a path with a link
 * in it exits 3, a grant path of root's (or not a directory) exits 4. No libc. Built by
 * tools/build_idmap_helper.sh into idmap_helper_elf.ts. x86-64 Linux.
 */

#define SYS_read 0
#define SYS_write 1
#define SYS_close 3
#define SYS_fstat 5
#define SYS_pause 34
#define SYS_clone 56
#define SYS_exit 60
#define SYS_wait4 61
#define SYS_kill 62
#define SYS_openat 257
#define SYS_open_tree 428
#define SYS_move_mount 429
#define SYS_openat2 437
#define SYS_mount_setattr 442
#define SYS_mkdirat 258
#define SYS_fchownat 260

#define AT_FDCWD -100
#define AT_EMPTY_PATH 0x1000
#define O_RDONLY 0
#define O_WRONLY 1
#define O_DIRECTORY 0200000
#define O_CLOEXEC 02000000
#define O_PATH 010000000
#define RESOLVE_NO_SYMLINKS 0x04
#define OPEN_TREE_CLONE 1
#define MOVE_MOUNT_F_EMPTY_PATH 0x04
#define MOVE_MOUNT_T_EMPTY_PATH 0x40
#define RESOLVE_BENEATH 0x08
#define O_CREAT 0100
#define O_EXCL 0200
#define O_NOFOLLOW 0400000
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_RECURSIVE 0x8000
#define EEXIST 17
#define ENOENT 2
#define MOUNT_ATTR_RDONLY 0x1
#define MOUNT_ATTR_NOSUID 0x2
#define MOUNT_ATTR_NODEV 0x4
#define MOUNT_ATTR_IDMAP 0x100000
#define CLONE_NEWUSER 0x10000000
#define SIGCHLD 17
#define SIGKILL 9
#define ELOOP 40
#define S_IFMT 0170000
#define S_IFDIR 0040000

struct open_how {
  unsigned long flags;
  unsigned long mode;
  unsigned long resolve;
};

struct mount_attr {
  unsigned long attr_set;
  unsigned long attr_clr;
  unsigned long propagation;
  unsigned long userns_fd;
};

struct kstat {
  unsigned long dev, ino, nlink;
  unsigned int mode, uid, gid, pad0;
  unsigned long rdev;
  long size, blksize, blocks;
  unsigned long times[6];
  long reserved[3];
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

static long length(const char *text) {
  long n = 0;
  while (text[n] != 0) n++;
  return n;
}

static void say(const char *text) { syscall5(SYS_write, 2, (long)text, length(text), 0, 0); }

static void __attribute__((noreturn)) leave(long code) {
  for (;;) syscall5(SYS_exit, code, 0, 0, 0, 0);
}

static void __attribute__((noreturn)) fail(const char *step, long error, long code) {
  char digits[24];
  int at = 23;
  digits[at] = 0;
  long value = error < 0 ? -error : error;
  do {
    digits[--at] = (char)('0' + value % 10);
    value /= 10;
  } while (value > 0 && at > 0);
  say("gurt-idmap: ");
  say(step);
  say(" errno ");
  say(digits + at);
  say("\n");
  leave(code);
}

static long number(const char *text) {
  long value = 0;
  if (*text == 0) fail("bad number", 22, 1);
  for (; *text != 0; text++) {
    if (*text < '0' || *text > '9') fail("bad number", 22, 1);
    value = value * 10 + (*text - '0');
  }
  return value;
}

/* Writes VALUE in decimal into OUT (24 bytes), returning where its digits start. */
static char *decimal(long value, char *out) {
  int at = 23;
  out[at] = 0;
  do {
    out[--at] = (char)('0' + value % 10);
    value /= 10;
  } while (value > 0 && at > 0);
  return out + at;
}

/* Opens PATH as an O_PATH directory with no link followed anywhere on it, or exits. */
static long open_folder(const char *path, const char *what) {
  struct open_how how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS};
  long fd = syscall5(SYS_openat2, AT_FDCWD, (long)path, (long)&how, sizeof how, 0);
  if (fd == -ELOOP) fail("linked path", fd, 3);
  if (fd < 0) fail(what, fd, 1);
  return fd;
}

/* Writes "INSIDE OUTSIDE 1\n" to /proc/PID/WHAT. */
static void write_map(long pid, const char *what, const char *inside, const char *outside) {
  char path[64];
  char digits[24];
  int at = 23;
  digits[at] = 0;
  long value = pid;
  do {
    digits[--at] = (char)('0' + value % 10);
    value /= 10;
  } while (value > 0 && at > 0);
  int n = 0;
  const char *parts[] = {"/proc/", digits + at, "/", what};
  for (int i = 0; i < 4; i++) {
    for (const char *c = parts[i]; *c != 0 && n < 63; c++) path[n++] = *c;
  }
  path[n] = 0;
  char line[64];
  n = 0;
  const char *fields[] = {inside, " ", outside, " 1\n"};
  for (int i = 0; i < 4; i++) {
    for (const char *c = fields[i]; *c != 0 && n < 63; c++) line[n++] = *c;
  }
  long fd = syscall5(SYS_openat, AT_FDCWD, (long)path, O_WRONLY | O_CLOEXEC, 0, 0);
  if (fd < 0) fail("open map", fd, 1);
  long wrote = syscall5(SYS_write, fd, (long)line, n, 0, 0);
  if (wrote != n) fail("write map", wrote, 1);
  syscall5(SYS_close, fd, 0, 0, 0, 0);
}

/* Opens the folder of REL's last component beneath DIR, making each missing folder on the way as
 * the owner's (MAKE), with no link followed and never above DIR; *last is that component. */
static long parent_of(long dir, char *rel, char **last, long make, long uid, long gid) {
  long cur = dir;
  char *part = rel;
  for (char *c = rel; *c != 0; c++) {
    if (*c != '/') continue;
    *c = 0;
    struct open_how how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                           RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
    long next = syscall5(SYS_openat2, cur, (long)part, (long)&how, sizeof how, 0);
    if (next == -ENOENT && make) {
      long made = syscall5(SYS_mkdirat, cur, (long)part, 0755, 0, 0);
      if (made < 0 && made != -EEXIST) fail("mkdir a cover's folder", made, 1);
      syscall5(SYS_fchownat, cur, (long)part, uid, gid, AT_SYMLINK_NOFOLLOW);
      next = syscall5(SYS_openat2, cur, (long)part, (long)&how, sizeof how, 0);
    }
    if (next == -ELOOP) fail("linked path", next, 3);
    if (next < 0) fail("open a cover's folder", next, 1);
    *c = '/';
    cur = next;
    part = c + 1;
  }
  *last = part;
  return cur;
}

/* Binds a read-only, nosuid, nodev clone of SOURCE_FD's PATH (a path, or "" for the fd itself)
 * over REL beneath TREE. */
static void cover(long source_fd, const char *path, long tree, char *rel, long writable) {
  long flags = OPEN_TREE_CLONE | O_CLOEXEC | AT_SYMLINK_NOFOLLOW | (path[0] == 0 ? AT_EMPTY_PATH : 0);
  long clone = syscall5(SYS_open_tree, source_fd, (long)path, flags, 0, 0);
  if (clone < 0) fail("open_tree a cover", clone, 1);
  struct mount_attr attr = {MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, 0, 0};
  if (!writable) attr.attr_set |= MOUNT_ATTR_RDONLY;
  long set = syscall5(SYS_mount_setattr, clone, (long)"", AT_EMPTY_PATH, (long)&attr, sizeof attr);
  if (set < 0) fail("mount_setattr a cover", set, 1);
  struct open_how how = {O_PATH | O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
  long at = syscall5(SYS_openat2, tree, (long)rel, (long)&how, sizeof how, 0);
  if (at == -ELOOP) fail("linked path", at, 3);
  if (at < 0) fail("open a cover's place", at, 1);
  long moved = syscall5(SYS_move_mount, clone, (long)"", at, (long)"",
                        MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
  if (moved < 0) fail("move_mount a cover", moved, 1);
  syscall5(SYS_close, at, 0, 0, 0, 0);
  syscall5(SYS_close, clone, 0, 0, 0, 0);
}

int helper_main(long *stack) {
  long argc = stack[0];
  char **argv = (char **)(stack + 1);
  if (argc != 7 && argc != 9) {
    fail("usage: SOURCE TARGET GRANT_PATH TASK_UID TASK_GID RO [EMPTY_FILE EMPTY_DIR]", 22, 1);
  }
  number(argv[4]);
  number(argv[5]);
  long readonly = number(argv[6]);

  long grant = open_folder(argv[3], "open grant path");
  struct kstat st;
  long got = syscall5(SYS_fstat, grant, (long)&st, 0, 0, 0);
  if (got < 0) fail("stat grant path", got, 1);
  if (st.uid == 0) fail("root's grant path", 0, 4);
  long owner = st.uid;
  long folder = open_folder(argv[1], "open source");
  got = syscall5(SYS_fstat, folder, (long)&st, 0, 0, 0);
  if (got < 0) fail("stat source", got, 1);
  char owner_uid[24], owner_gid[24];
  char *uid_text = decimal(owner, owner_uid);
  if ((long)st.uid != owner) {
    say("gurt-idmap: the grant path's owner is ");
    say(uid_text);
    say("\n");
    fail("not the owner's folder", st.uid, 2);
  }
  char *gid_text = decimal(st.gid, owner_gid);

  long child = syscall5(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (child < 0) fail("clone", child, 1);
  if (child == 0) {
    for (;;) syscall5(SYS_pause, 0, 0, 0, 0, 0);
  }
  write_map(child, "uid_map", uid_text, argv[4]);
  write_map(child, "gid_map", gid_text, argv[5]);
  char ns[64];
  {
    char digits[24];
    int at = 23;
    digits[at] = 0;
    long value = child;
    do {
      digits[--at] = (char)('0' + value % 10);
      value /= 10;
    } while (value > 0 && at > 0);
    int n = 0;
    const char *parts[] = {"/proc/", digits + at, "/ns/user"};
    for (int i = 0; i < 3; i++) {
      for (const char *c = parts[i]; *c != 0 && n < 63; c++) ns[n++] = *c;
    }
    ns[n] = 0;
  }
  long userns = syscall5(SYS_openat, AT_FDCWD, (long)ns, O_RDONLY | O_CLOEXEC, 0, 0);
  syscall5(SYS_kill, child, SIGKILL, 0, 0, 0);
  syscall5(SYS_wait4, child, 0, 0, 0, 0);
  if (userns < 0) fail("open user namespace", userns, 1);

  long tree = syscall5(SYS_open_tree, folder, (long)"", OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH,
                       0, 0);
  if (tree < 0) fail("open_tree", tree, 1);
  struct mount_attr attr = {MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, 0,
                            (unsigned long)userns};
  if (readonly == 1) attr.attr_set |= MOUNT_ATTR_RDONLY;
  long set = syscall5(SYS_mount_setattr, tree, (long)"", AT_EMPTY_PATH, (long)&attr, sizeof attr);
  if (set < 0) fail("mount_setattr", set, 1);
  long moved = syscall5(SYS_move_mount, tree, (long)"", AT_FDCWD, (long)argv[2],
                        MOVE_MOUNT_F_EMPTY_PATH);
  if (moved < 0) fail("move_mount", moved, 1);
  if (argc == 7) leave(0);
  syscall5(SYS_write, 1, (long)"mounted\n", 8, 0, 0);
  static char covers[1 << 20];
  long have = 0;
  for (;;) {
    long got = syscall5(SYS_read, 0, (long)(covers + have), (long)sizeof covers - 1 - have, 0, 0);
    if (got < 0) fail("read the covers", got, 1);
    if (got == 0) break;
    have += got;
    if (have >= (long)sizeof covers - 1) fail("too many covers", 7, 1);
  }
  covers[have] = 0;
  for (char *line = covers; *line != 0;) {
    char *end = line;
    while (*end != 0 && *end != '\n') end++;
    char *next = *end == 0 ? end : end + 1;
    *end = 0;
    if (line[0] == 0 || line[1] != ' ' || line[2] == 0) fail("a bad cover line", 22, 1);
    char kind = line[0];
    char *rel = line + 2;
    line = next;
    if (kind == 'F' || kind == 'D' || kind == 'p') {
      char *last;
      long dir = parent_of(folder, rel, &last, 1, owner, st.gid);
      long made = kind != 'F'
                      ? syscall5(SYS_mkdirat, dir, (long)last, 0755, 0, 0)
                      : syscall5(SYS_openat, dir, (long)last,
                                 O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644, 0);
      if (made < 0 && made != -EEXIST) fail("make a cover's place", made, 1);
      if (made >= 0 && kind == 'F') syscall5(SYS_close, made, 0, 0, 0, 0);
      if (made >= 0) syscall5(SYS_fchownat, dir, (long)last, owner, st.gid, AT_SYMLINK_NOFOLLOW);
    }
    if (kind == 'f' || kind == 'p') {
      char *last;
      long dir = parent_of(tree, rel, &last, 0, 0, 0);
      cover(dir, last, tree, rel, kind == 'p');
    } else {
      cover(AT_FDCWD, kind == 'D' || kind == 'E' ? argv[8] : argv[7], tree, rel, 0);
    }
  }
  leave(0);
}

/* The kernel enters here with argc at the top of the stack. */
__asm__(".globl _start\n"
        "_start:\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call helper_main\n");
