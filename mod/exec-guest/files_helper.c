/*
 * gurt's files helper: one operation of the guest's /v1/files routes, done beneath the workspace
 * by the kernel. Every path is opened from the workspace's root with openat2(2) and
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, and the object itself from the folder so opened, never
 * following a final link: a folder swapped for a link while the guest works makes the operation
 * fail (ELOOP), it never reaches outside. Nothing waits on a FIFO, a socket or a device: the type
 * is read with fstatat before anything is opened, and opens are O_NONBLOCK.
 *
 * The guest resolves a path first (following the links that stay inside, mod/exec-guest/jail.ts)
 * and gives this helper the link-free result, relative to ROOT ("." for ROOT itself).
 *
 *   files ROOT read PATH MAX_BYTES MAX_ENTRIES   a regular file: "f SIZE\n" then its bytes (at
 *                                                most MAX_BYTES + 1); larger: "b SIZE\n"; a
 *                                                folder: "d\n" then "KIND SIZE NAME\0" per entry
 *                                                (KIND f, d, l or o), and "t\0" past MAX_ENTRIES
 *   files ROOT raw PATH                          a regular file: "f SIZE\n" then all its bytes
 *   files ROOT write PATH                        standard input into the regular file PATH, made
 *                                                (0666 less the umask) if it is not there: "ok\n"
 *   files ROOT mkdir PATH                        one folder: "ok\n"
 *   files ROOT delete PATH 0|1                   a file, a link, an empty folder, or with 1 a whole
 *                                                folder (its links removed, never followed): "ok\n"
 *   files ROOT move PATH TO                      renames, never replacing what is at TO: "ok\n"
 *
 * A folder where a file is wanted answers "D\n"; anything but a regular file or a folder, "o\n".
 * Any failure writes "gurt-files: errno NNN" and a newline to stderr and exits 1.
 *
 * Built by tools/build_files_helper.sh into files_helper_elf.ts; a test rebuilds it and fails if
 * the checked-in bytes differ. x86-64 Linux 5.6 or later only.
 */

#define SYS_read 0
#define SYS_write 1
#define SYS_close 3
#define SYS_fstat 5
#define SYS_lseek 8
#define SYS_ftruncate 77
#define SYS_getdents64 217
#define SYS_exit_group 231
#define SYS_openat 257
#define SYS_mkdirat 258
#define SYS_newfstatat 262
#define SYS_unlinkat 263
#define SYS_renameat2 316
#define SYS_openat2 437

#define EINTR 4
#define E2BIG 7
#define EINVAL 22
#define ENOENT 2
#define EEXIST 17
#define ESTALE 116

#define O_RDONLY 00
#define O_WRONLY 01
#define O_CREAT 0100
#define O_NONBLOCK 04000
#define O_DIRECTORY 0200000
#define O_NOFOLLOW 0400000
#define O_CLOEXEC 02000000
#define O_PATH 010000000

#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR 0x200
#define RENAME_NOREPLACE 1

#define S_IFMT 0170000
#define S_IFDIR 0040000
#define S_IFREG 0100000
#define S_IFLNK 0120000

#define DT_DIR 4
#define DT_UNKNOWN 0

#define MAX_DEPTH 256

struct kstat {
  unsigned long dev, ino, nlink;
  unsigned int mode, uid, gid, pad;
  unsigned long rdev;
  long size, blksize, blocks;
  unsigned long times[6];
  long unused[3];
};

struct open_how {
  unsigned long flags, mode, resolve;
};

struct dirent64 {
  unsigned long ino;
  long off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

static long sys(long number, long a, long b, long c, long d, long e) {
  long result;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return result;
}

static void quit(long status) __attribute__((noreturn));
static void quit(long status) {
  for (;;) sys(SYS_exit_group, status, 0, 0, 0, 0);
}

static void fail(long error) __attribute__((noreturn));
static void fail(long error) {
  char line[] = {'g', 'u', 'r', 't', '-', 'f', 'i', 'l', 'e', 's', ':', ' ',
                 'e', 'r', 'r', 'n', 'o', ' ', '0', '0', '0', '\n'};
  line[18] = (char)('0' + error / 100 % 10);
  line[19] = (char)('0' + error / 10 % 10);
  line[20] = (char)('0' + error % 10);
  sys(SYS_write, 2, (long)line, sizeof line, 0, 0);
  quit(1);
}

/* A system call's result, or the end with its errno. */
static long check(long result) {
  if (result < 0) fail(-result);
  return result;
}

/* Standard output, buffered. */
static char out_buffer[65536];
static long out_length;

static void flush(void) {
  for (long at = 0; at < out_length;) {
    long written = sys(SYS_write, 1, (long)(out_buffer + at), out_length - at, 0, 0);
    if (written == -EINTR) continue;
    at += check(written);
  }
  out_length = 0;
}

static void put(const char *bytes, long length) {
  for (long i = 0; i < length; i++) {
    if (out_length == (long)sizeof out_buffer) flush();
    out_buffer[out_length++] = bytes[i];
  }
}

static void put_text(const char *text) {
  long length = 0;
  while (text[length] != 0) length++;
  put(text, length);
}

static void put_number(unsigned long number) {
  char digits[24];
  long at = sizeof digits;
  do {
    digits[--at] = (char)('0' + number % 10);
    number /= 10;
  } while (number != 0);
  put(digits + at, (long)sizeof digits - at);
}

static void answer(const char *text) __attribute__((noreturn));
static void answer(const char *text) {
  put_text(text);
  flush();
  quit(0);
}

static long parse_number(const char *text) {
  long number = 0;
  if (*text == 0) fail(EINVAL);
  for (; *text != 0; text++) {
    if (*text < '0' || *text > '9' || number > 100000000000000L) fail(EINVAL);
    number = number * 10 + (*text - '0');
  }
  return number;
}

static int same(const char *a, const char *b) {
  while (*a != 0 && *a == *b) a++, b++;
  return *a == *b;
}

static long root_fd;

/* Opens a path beneath the root; no link may be on the way, the last name included. */
static long beneath(const char *path, long flags) {
  struct open_how how = {(unsigned long)(flags | O_CLOEXEC), 0,
                         RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
  return check(sys(SYS_openat2, root_fd, (long)path, (long)&how, sizeof how, 0));
}

/* The folder holding PATH, opened O_PATH beneath the root, and PATH's last name in *name. */
static long parent_of(char *path, const char **name) {
  long slash = -1;
  for (long i = 0; path[i] != 0; i++) {
    if (path[i] == '/') slash = i;
  }
  *name = path + slash + 1;
  if (same(*name, "") || same(*name, ".") || same(*name, "..")) fail(EINVAL);
  if (slash < 0) return beneath(".", O_PATH | O_DIRECTORY);
  path[slash] = 0;
  return beneath(path, O_PATH | O_DIRECTORY);
}

/* Opens NAME in FOLDER without following a link or waiting, and checks it is what was stat'ed. */
static long open_checked(long folder, const char *name, long flags, struct kstat *seen) {
  long fd = check(sys(SYS_openat, folder, (long)name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                      0666, 0));
  struct kstat now;
  check(sys(SYS_fstat, fd, (long)&now, 0, 0, 0));
  /* Swapped between the stat and the open: a different object, not to be used. */
  if (seen != 0 && (now.dev != seen->dev || now.ino != seen->ino)) fail(ESTALE);
  if (seen != 0) {
    seen->mode = now.mode;
    seen->size = now.size;
  }
  return fd;
}

static char io_buffer[65536];

/* Copies from one descriptor to another until the end, or until LIMIT bytes (-1: no limit). */
static void copy(long from, long to, long limit) {
  long total = 0;
  for (;;) {
    long want = sizeof io_buffer;
    if (limit >= 0 && limit - total < want) want = limit - total;
    if (want == 0) return;
    long count = sys(SYS_read, from, (long)io_buffer, want, 0, 0);
    if (count == -EINTR) continue;
    if (check(count) == 0) return;
    total += count;
    for (long at = 0; at < count;) {
      long written = sys(SYS_write, to, (long)(io_buffer + at), count - at, 0, 0);
      if (written == -EINTR) continue;
      at += check(written);
    }
  }
}

static char kind_of(unsigned int mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return 'f';
    case S_IFDIR:
      return 'd';
    case S_IFLNK:
      return 'l';
    default:
      return 'o';
  }
}

static int is_dot(const char *name) {
  return same(name, ".") || same(name, "..");
}

static void list(long folder, long max_entries) {
  put_text("d\n");
  long entries = 0;
  char buffer[16384];
  for (;;) {
    long count = check(sys(SYS_getdents64, folder, (long)buffer, sizeof buffer, 0, 0));
    if (count == 0) break;
    for (long at = 0; at < count;) {
      struct dirent64 *entry = (struct dirent64 *)(buffer + at);
      at += entry->reclen;
      if (is_dot(entry->name)) continue;
      if (entries == max_entries) {
        put("t", 2);
        answer("");
      }
      entries++;
      struct kstat st;
      char kind = 'o';
      unsigned long size = 0;
      if (sys(SYS_newfstatat, folder, (long)entry->name, (long)&st, AT_SYMLINK_NOFOLLOW, 0) == 0) {
        kind = kind_of(st.mode);
        size = (unsigned long)st.size;
      }
      put(&kind, 1);
      put(" ", 1);
      put_number(size);
      put(" ", 1);
      long length = 0;
      while (entry->name[length] != 0) length++;
      put(entry->name, length + 1);
    }
  }
  answer("");
}

/* read and raw: a file's bytes, or (read only) a folder's entries. */
static void read_path(char *path, long max_bytes, long max_entries, int raw) {
  const char *name = ".";
  long folder = root_fd;
  if (!same(path, ".")) folder = parent_of(path, &name);
  struct kstat st;
  check(sys(SYS_newfstatat, folder, (long)name, (long)&st, AT_SYMLINK_NOFOLLOW, 0));
  if ((st.mode & S_IFMT) == S_IFDIR) {
    if (raw) answer("D\n");
    list(open_checked(folder, name, O_RDONLY | O_DIRECTORY, &st), max_entries);
  }
  if ((st.mode & S_IFMT) != S_IFREG) answer("o\n");
  if (!raw && st.size > max_bytes) {
    put_text("b ");
    put_number((unsigned long)st.size);
    answer("\n");
  }
  long fd = open_checked(folder, name, O_RDONLY, &st);
  put_text("f ");
  put_number((unsigned long)st.size);
  put_text("\n");
  flush();
  copy(fd, 1, raw ? -1 : max_bytes + 1);
  quit(0);
}

static void write_path(char *path) {
  const char *name;
  long folder = parent_of(path, &name);
  struct kstat st;
  long found = sys(SYS_newfstatat, folder, (long)name, (long)&st, AT_SYMLINK_NOFOLLOW, 0);
  if (found == 0 && (st.mode & S_IFMT) == S_IFDIR) answer("D\n");
  if (found == 0 && (st.mode & S_IFMT) != S_IFREG) answer("o\n");
  if (found != 0 && found != -ENOENT) fail(-found);
  long fd = open_checked(folder, name, O_WRONLY | O_CREAT, found == 0 ? &st : 0);
  check(sys(SYS_fstat, fd, (long)&st, 0, 0, 0));
  if ((st.mode & S_IFMT) != S_IFREG) answer("o\n");
  check(sys(SYS_ftruncate, fd, 0, 0, 0, 0));
  copy(0, fd, -1);
  answer("ok\n");
}

/* Empties the folder NAME in FOLDER, folders below first; links are removed, never followed. */
static void purge(long folder, const char *name, int depth) {
  if (depth > MAX_DEPTH) fail(E2BIG);
  long fd = check(sys(SYS_openat, folder, (long)name,
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, 0));
  char buffer[4096];
  for (int removed = 1; removed;) {
    removed = 0;
    check(sys(SYS_lseek, fd, 0, 0, 0, 0));
    for (;;) {
      long count = check(sys(SYS_getdents64, fd, (long)buffer, sizeof buffer, 0, 0));
      if (count == 0) break;
      for (long at = 0; at < count;) {
        struct dirent64 *entry = (struct dirent64 *)(buffer + at);
        at += entry->reclen;
        if (is_dot(entry->name)) continue;
        int folder_entry = entry->type == DT_DIR;
        if (entry->type == DT_UNKNOWN) {
          struct kstat st;
          check(sys(SYS_newfstatat, fd, (long)entry->name, (long)&st, AT_SYMLINK_NOFOLLOW, 0));
          folder_entry = (st.mode & S_IFMT) == S_IFDIR;
        }
        if (folder_entry) purge(fd, entry->name, depth + 1);
        check(sys(SYS_unlinkat, fd, (long)entry->name, folder_entry ? AT_REMOVEDIR : 0, 0, 0));
        removed = 1;
      }
    }
  }
  sys(SYS_close, fd, 0, 0, 0, 0);
}

static void delete_path(char *path, long recursive) {
  const char *name;
  long folder = parent_of(path, &name);
  struct kstat st;
  check(sys(SYS_newfstatat, folder, (long)name, (long)&st, AT_SYMLINK_NOFOLLOW, 0));
  int is_folder = (st.mode & S_IFMT) == S_IFDIR;
  if (is_folder && recursive) purge(folder, name, 0);
  check(sys(SYS_unlinkat, folder, (long)name, is_folder ? AT_REMOVEDIR : 0, 0, 0));
  answer("ok\n");
}

static void move_path(char *from, char *to) {
  const char *from_name;
  const char *to_name;
  long from_folder = parent_of(from, &from_name);
  long to_folder = parent_of(to, &to_name);
  long moved = sys(SYS_renameat2, from_folder, (long)from_name, to_folder, (long)to_name,
                   RENAME_NOREPLACE);
  if (moved == -EINVAL) {
    /* A file system without RENAME_NOREPLACE: look first (the guest checked "into itself"). */
    struct kstat st;
    long found = sys(SYS_newfstatat, to_folder, (long)to_name, (long)&st, AT_SYMLINK_NOFOLLOW, 0);
    if (found == 0) fail(EEXIST);
    if (found != -ENOENT) fail(-found);
    moved = sys(SYS_renameat2, from_folder, (long)from_name, to_folder, (long)to_name, 0);
  }
  check(moved);
  answer("ok\n");
}

void helper_main(long *stack) __attribute__((noreturn, used));
void helper_main(long *stack) {
  long argc = stack[0];
  char **argv = (char **)stack + 1;
  if (argc < 4) fail(EINVAL);
  root_fd = check(sys(SYS_openat, -100, (long)argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0));
  const char *op = argv[2];
  char *path = argv[3];
  if (same(op, "read") && argc == 6) {
    read_path(path, parse_number(argv[4]), parse_number(argv[5]), 0);
  }
  if (same(op, "raw") && argc == 4) read_path(path, 0, 0, 1);
  if (same(op, "write") && argc == 4) write_path(path);
  if (same(op, "mkdir") && argc == 4) {
    const char *name;
    long folder = parent_of(path, &name);
    check(sys(SYS_mkdirat, folder, (long)name, 0777, 0, 0));
    answer("ok\n");
  }
  if (same(op, "delete") && argc == 5) delete_path(path, parse_number(argv[4]));
  if (same(op, "move") && argc == 5) move_path(path, argv[4]);
  fail(EINVAL);
}

/* The kernel enters here with argc at the top of the stack. */
__asm__(".globl _start\n"
        "_start:\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call helper_main\n");
