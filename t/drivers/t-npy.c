/* t/drivers/t-npy.c - .npy save/load: round trips for every dtype numpy has, files
 * crafted byte by byte (versions 2.0 and 3.0, big-endian, Fortran order,
 * unknown dtypes), and malformed files (truncated at every byte, header
 * lengths that lie, data of the wrong size).
 *
 *   t-npy                run the tests
 *   t-npy check DIR      t/interop/t-npy-numpy.sh's half: load the .npy files in DIR written by
 *                        numpy and write DIR/out_*.npy for numpy to read
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dt.h"

static char dir[] = "/tmp/tendo-npy-XXXXXX";

static const char *path_of(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

/* Writes an .npy file from a header dict and raw data bytes (version v). */
static void write_npy(const char *name, int v, const char *dict, const void *data, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    size_t pre = v == 1 ? 10 : 12, hl = strlen(dict) + 1, pad = (64 - (pre + hl) % 64) % 64, total = hl + pad;
    unsigned char h[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)v, 0,
                           (unsigned char)(total & 0xff), (unsigned char)(total >> 8), 0, 0};

    if (!f)
        bail("cannot write %s", path_of(name));
    fwrite(h, 1, pre, f);
    fprintf(f, "%s%*s\n", dict, (int)pad, "");
    fwrite(data, 1, n, f);
    fclose(f);
}

static void test_roundtrip(void)
{
    float v[6] = {0.5f, -1.25f, 3.0f, 1e-3f, 65504.0f, -0.0f};
    tensor_f32 *a = tensor_f32_from_data(v, TENDO_SHAPE(2, 3), tendo_cpu());
    tensor_f32 *t = tensor_transpose(a, 0, 1);
#ifdef TENDO_HAVE_F16 /* a build may leave f16 and bf16 out (--enable-dtypes) */
    tensor_f16 *h = tensor_to_f16(a);
#endif
#ifdef TENDO_HAVE_BF16
    tensor_bf16 *b = tensor_to_bf16(a);
#endif
    tensor_f32 *s = tensor_f32_full(0, NULL, 7.5, tendo_cpu()), *z = tensor_f32_zeros(TENDO_SHAPE(0, 4), tendo_cpu());
    tendo_tensor *e;
    float back[6];

    ok(tendo_npy_save(path_of("t.npy"), tensor_erase(t)) == TENDO_OK, "save a transposed f32 view");
    e = tendo_npy_load(path_of("t.npy"));
    ok(e && tendo_tensor_dtype(e) == TENDO_F32 && tendo_tensor_ndim(e) == 2 && tendo_tensor_shape(e)[0] == 3,
       "  it loads back as f32 [3,2]");
    ok(e && tensor_copy_to(tendo_as_f32(e), back, 6) == TENDO_OK && back[0] == 0.5f && back[1] == 1e-3f &&
           back[5] == -0.0f && memcmp(&back[5], &v[5], 4) == 0,
       "  with the transposed values, bit for bit");
    tendo_tensor_free(e);
#ifdef TENDO_HAVE_F16
    ok(tendo_npy_save(path_of("h.npy"), tensor_erase(h)) == TENDO_OK && (e = tendo_npy_load(path_of("h.npy"))) &&
           tendo_tensor_dtype(e) == TENDO_F16 && memcmp(tensor_data(tendo_as_f16(e)), tensor_data(h), 12) == 0,
       "f16 round-trips bit for bit");
    tendo_tensor_free(e);
    tensor_free(h);
#else
    skip(1, "f16 round trip: this build has no f16");
#endif
    ok(tendo_npy_save(path_of("s.npy"), tensor_erase(s)) == TENDO_OK && (e = tendo_npy_load(path_of("s.npy"))) &&
           tendo_tensor_ndim(e) == 0 && tensor_data(tendo_as_f32(e))[0] == 7.5f,
       "a 0-d tensor round-trips");
    tendo_tensor_free(e);
    ok(tendo_npy_save(path_of("z.npy"), tensor_erase(z)) == TENDO_OK && (e = tendo_npy_load(path_of("z.npy"))) &&
           tendo_tensor_numel(e) == 0 && tendo_tensor_shape(e)[1] == 4,
       "an empty [0,4] tensor round-trips");
    tendo_tensor_free(e);
#ifdef TENDO_HAVE_BF16
    ok(tendo_npy_save(path_of("b.npy"), tensor_erase(b)) == TENDO_ERR_UNSUPPORTED &&
           strstr(tendo_error_message(tendo_last_error()), "bf16") && access(path_of("b.npy"), F_OK) != 0,
       "bf16 is refused with TENDO_ERR_UNSUPPORTED naming it, and no file is left: %s",
       tendo_error_message(tendo_last_error()));
    tensor_free(b);
#else
    skip(1, "bf16 refused: this build has no bf16");
#endif
    tensor_free(a);
    tensor_free(t);
    tensor_free(s);
    tensor_free(z);
}

static void test_crafted(void)
{
    float le[6] = {1, 2, 3, 4, 5, 6};
    unsigned char be[24];
    uint16_t h16[2] = {0x3c00, 0xc000}; /* 1.0, -2.0 */
    tendo_tensor *e;
    float got[6];

    for (int i = 0; i < 6; i++) /* big-endian floats */
        for (int k = 0; k < 4; k++)
            be[i * 4 + k] = ((unsigned char *)&le[i])[3 - k];
    write_npy("v2.npy", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", le, 24);
    e = tendo_npy_load(path_of("v2.npy"));
    ok(e && tensor_copy_to(tendo_as_f32(e), got, 6) == TENDO_OK && got[5] == 6, "format 2.0 loads");
    tendo_tensor_free(e);
    write_npy("v3.npy", 3, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", h16, 4);
    e = tendo_npy_load(path_of("v3.npy"));
#ifdef TENDO_HAVE_F16
    ok(e && tendo_tensor_dtype(e) == TENDO_F16 && tendo_f16_to_f32(tensor_data(tendo_as_f16(e))[1]) == -2.0f,
       "format 3.0 with '<f2' loads as f16");
#else
    ok(!e && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED,
       "format 3.0 with '<f2' is refused by a build without f16: %s", tendo_error_message(tendo_last_error()));
#endif
    tendo_tensor_free(e);
    write_npy("be.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", be, 24);
    e = tendo_npy_load(path_of("be.npy"));
    ok(e && tensor_copy_to(tendo_as_f32(e), got, 6) == TENDO_OK && got[0] == 1 && got[5] == 6,
       "big-endian '>f4' loads with the bytes swapped");
    tendo_tensor_free(e);
    write_npy("f.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", le, 24);
    e = tendo_npy_load(path_of("f.npy"));
    ok(e && tendo_tensor_shape(e)[0] == 2 && tendo_tensor_stride(e)[0] == 1 && tendo_tensor_stride(e)[1] == 2 &&
           tensor_copy_to(tendo_as_f32(e), got, 6) == TENDO_OK && got[0] == 1 && got[1] == 3 && got[3] == 2,
       "Fortran order loads as a transposed view (strides [1,2]), values in column-major order");
    tendo_tensor_free(e);
    write_npy("c8.npy", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", le, 24);
    ok(tendo_npy_load(path_of("c8.npy")) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED &&
           strstr(tendo_error_message(tendo_last_error()), "'<c8'"),
       "'<c8' is TENDO_ERR_UNSUPPORTED naming the dtype: %s", tendo_error_message(tendo_last_error()));
}

/* Each malformed file fails with TENDO_ERR_FORMAT (no crash, no leak). */
static void test_malformed(void)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    struct { const char *name, *dict; size_t n; } cases[] = {
        {"nodescr.npy", "{'fortran_order': False, 'shape': (6,), }", 24},
        {"noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", 24},
        {"badorder.npy", "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,), }", 24},
        {"negshape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }", 24},
        {"ninedims.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,6), }", 24},
        {"short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", 24},
        {"long.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", 24},
        {"huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 24},
        {"hugeempty.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4), }", 0},
        {"pastint64.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (22222222222222222222, 1, 3), }", 24},
        {"hugebytes.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 1), }", 24},
    };
    FILE *f;
    char *full;
    long len;
    int bad = 0;

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_npy(cases[i].name, 1, cases[i].dict, v, cases[i].n);
        /* a fault of the file: TENDO_ERR_FORMAT naming it (io.h), sizes never negative */
        ok(tendo_npy_load(path_of(cases[i].name)) == NULL &&
               tendo_error_status(tendo_last_error()) == TENDO_ERR_FORMAT &&
               strstr(tendo_error_message(tendo_last_error()), path_of(cases[i].name)) &&
               !strstr(tendo_error_message(tendo_last_error()), "needs -"),
           "%s is refused: %s", cases[i].name, tendo_error_message(tendo_last_error()));
    }
    /* a valid file truncated at every byte */
    write_npy("whole.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", v, 24);
    f = fopen(path_of("whole.npy"), "rb");
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    full = malloc((size_t)len);
    if (fread(full, 1, (size_t)len, f) != (size_t)len)
        bail("cannot read back whole.npy");
    fclose(f);
    for (long cut = 0; cut < len; cut++) {
        FILE *g = fopen(path_of("cut.npy"), "wb");
        fwrite(full, 1, (size_t)cut, g);
        fclose(g);
        bad += tendo_npy_load(path_of("cut.npy")) != NULL ||
               tendo_error_status(tendo_last_error()) != TENDO_ERR_FORMAT;
    }
    is_int(0, bad, "truncated at each of its %ld bytes, a valid file gives TENDO_ERR_FORMAT every time", len);
    full[8] = (char)0xff; /* header length past the end */
    f = fopen(path_of("lie.npy"), "wb");
    fwrite(full, 1, (size_t)len, f);
    fclose(f);
    ok(tendo_npy_load(path_of("lie.npy")) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_FORMAT,
       "a header length that lies: %s", tendo_error_message(tendo_last_error()));
    free(full);
    ok(tendo_npy_load(path_of("missing.npy")) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_IO,
       "a missing file is TENDO_ERR_IO");
    ok(tendo_npy_load(NULL) == NULL && tendo_npy_save(NULL, NULL) == TENDO_ERR_INVALID_ARG, "NULL paths are refused");
}

/* numpy's files in d: a.npy f32 arange(6).reshape(2,3), f.npy the same in
 * Fortran order, h.npy f16 arange(4) big-endian; writes out_*.npy back. */
static int check_numpy(const char *d)
{
    char p[512];
    float got[6];
    tendo_tensor *a, *f, *h;
    float want[6] = {0, 1, 2, 3, 4, 5};

    snprintf(p, sizeof p, "%s/a.npy", d);
    a = tendo_npy_load(p);
    ok(a && tensor_copy_to(tendo_as_f32(a), got, 6) == TENDO_OK && !memcmp(got, want, sizeof got),
       "numpy's C-order f32 file loads bit for bit");
    snprintf(p, sizeof p, "%s/f.npy", d);
    f = tendo_npy_load(p);
    ok(f && tendo_tensor_stride(f)[0] == 1 && tensor_copy_to(tendo_as_f32(f), got, 6) == TENDO_OK &&
           !memcmp(got, want, sizeof got),
       "numpy's Fortran-order f32 file loads as a transposed view with the same values");
    snprintf(p, sizeof p, "%s/h.npy", d);
    h = tendo_npy_load(p);
#ifdef TENDO_HAVE_F16
    ok(h && tendo_tensor_dtype(h) == TENDO_F16 && tendo_f16_to_f32(tensor_data(tendo_as_f16(h))[3]) == 3.0f,
       "numpy's big-endian f16 file loads");
#else
    ok(!h && tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED,
       "numpy's f16 file is refused by a build without f16");
#endif
    snprintf(p, sizeof p, "%s/out_a.npy", d);
    ok(a && tendo_npy_save(p, a) == TENDO_OK, "wrote out_a.npy for numpy");
    snprintf(p, sizeof p, "%s/out_f.npy", d);
    ok(f && tendo_npy_save(p, f) == TENDO_OK, "wrote out_f.npy (from the Fortran view) for numpy");
    snprintf(p, sizeof p, "%s/out_h.npy", d);
#ifdef TENDO_HAVE_F16
    ok(h && tendo_npy_save(p, h) == TENDO_OK, "wrote out_h.npy for numpy");
#else
    skip(1, "no f16 file to write back: this build has no f16");
#endif
    tendo_tensor_free(a);
    tendo_tensor_free(f);
    tendo_tensor_free(h);
    return done_testing();
}

/* The new dtypes: descrs of both byte orders, bools normalised, and the
 * dtypes numpy lacks refused by name. */
static void test_kinds(void)
{
    const unsigned char b1[3] = {0, 1, 2};
    bool bo[3];
    tendo_tensor *e;

#ifdef TENDO_HAVE_I32
    {
    const unsigned char be_i4[8] = {0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x01, 0x00};
    int32_t i4[2];

    write_npy("be_i4.npy", 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be_i4, 8);
    e = tendo_npy_load(path_of("be_i4.npy"));
    ok(e && tendo_tensor_dtype(e) == TENDO_I32 && tensor_copy_to(tendo_as_i32(e), i4, 2) == TENDO_OK && i4[0] == -2 &&
           i4[1] == 256,
       "'>i4' loads as i32 with the bytes swapped");
    tendo_tensor_free(e);
    }
#endif
    write_npy("b1.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b1, 3);
    e = tendo_npy_load(path_of("b1.npy"));
    ok(e && tendo_tensor_dtype(e) == TENDO_BOOL && tensor_copy_to(tendo_as_bool(e), bo, 3) == TENDO_OK && !bo[0] &&
           bo[1] && bo[2] && ((const unsigned char *)tendo_tensor_data(e))[2] == 1,
       "'|b1' loads as bool; a byte of 2 is true, stored as 1");
    tendo_tensor_free(e);
#ifdef TENDO_HAVE_U8
    write_npy("u1.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", b1, 3);
    e = tendo_npy_load(path_of("u1.npy"));
    ok(e && tendo_tensor_dtype(e) == TENDO_U8, "'|u1' loads as u8");
    tendo_tensor_free(e);
#endif
#ifdef TENDO_HAVE_F8E4M3
    {
        tensor_f32 *a = tensor_f32_zeros(TENDO_SHAPE(2), tendo_cpu());
        tendo_tensor *q = tendo_tensor_to_dtype(tensor_erase(a), TENDO_F8E4M3);

        ok(q && tendo_npy_save(path_of("q.npy"), q) == TENDO_ERR_UNSUPPORTED &&
               strstr(tendo_error_message(tendo_last_error()), "f8e4m3") && access(path_of("q.npy"), F_OK) != 0,
           "saving f8e4m3 is refused by name, no file: %s", tendo_error_message(tendo_last_error()));
        tendo_tensor_free(q);
        tensor_f32_free(a);
    }
#endif
#ifdef TENDO_HAVE_F8E5M2
    {
        tensor_f32 *a = tensor_f32_zeros(TENDO_SHAPE(2), tendo_cpu());
        tendo_tensor *q = tendo_tensor_to_dtype(tensor_erase(a), TENDO_F8E5M2);

        ok(q && tendo_npy_save(path_of("q.npy"), q) == TENDO_ERR_UNSUPPORTED &&
               strstr(tendo_error_message(tendo_last_error()), "f8e5m2"),
           "saving f8e5m2 is refused by name: %s", tendo_error_message(tendo_last_error()));
        tendo_tensor_free(q);
        tensor_f32_free(a);
    }
#endif
}

/* t-npy resave IN OUT: loads IN and saves it as OUT (t/interop/t-npy-numpy.sh). */
static int resave(const char *in, const char *out)
{
    tendo_tensor *t = tendo_npy_load(in);
    tendo_status st = t ? tendo_npy_save(out, t) : TENDO_ERR_IO;

    if (st != TENDO_OK)
        fprintf(stderr, "resave: %s\n", tendo_error_message(tendo_last_error()));
    tendo_tensor_free(t);
    return st == TENDO_OK ? 0 : 1;
}

/* Whether dir holds a file whose name contains part. */
static bool dir_has(const char *d, const char *part)
{
    DIR *dd = opendir(d);
    struct dirent *de;
    bool found = false;

    while (dd && (de = readdir(dd)))
        found |= strstr(de->d_name, part) != NULL;
    if (dd)
        closedir(dd);
    return found;
}

/* Where a save may go: a FIFO or device is written in place, never
 * replaced; an empty path, a directory or a name ending in '/' is refused
 * before anything is written; a directory is not a file to load. */
static void test_save_targets(void)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    tensor_f32 *a = tensor_f32_from_data(v, TENDO_SHAPE(2, 3), tendo_cpu());
    tendo_tensor *e = tensor_erase(a);
    char fifo[300], sub[300], below[300], cwd[4096];
    struct stat st, reg;
    long got = -1;
    int status;
    pid_t pid = -1;

    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub/", dir);
    if (!e || tendo_npy_save(path_of("regular.npy"), e) != TENDO_OK || stat(path_of("regular.npy"), &reg) != 0 ||
        mkfifo(fifo, 0600) != 0)
        bail("setting up the save targets");

    { /* this process reads: the file (152 bytes) fits the FIFO's buffer */
        char buf[4096];
        int rd = open(fifo, O_RDONLY | O_NONBLOCK);
        ok(rd >= 0 && tendo_npy_save(fifo, e) == TENDO_OK, "a save to a FIFO with a reader succeeds (%s)",
           tendo_error_message(tendo_last_error()));
        got = rd >= 0 ? (long)read(rd, buf, sizeof buf) : -1;
        if (rd >= 0)
            close(rd);
        ok(got == (long)reg.st_size, "the reader got the whole file (%ld bytes of %ld)", got, (long)reg.st_size);
    }
    ok(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode) && !dir_has(dir, "fifo.tmp-"),
       "the FIFO is still a FIFO, and no temporary file was made");
    ok(tendo_npy_save(fifo, e) == TENDO_ERR_IO && strstr(tendo_error_message(tendo_last_error()), "no reader") &&
           lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode),
       "a FIFO without a reader: TENDO_ERR_IO at once, the FIFO kept (%s)", tendo_error_message(tendo_last_error()));
    if (access("/dev/null", W_OK) == 0)
        ok(tendo_npy_save("/dev/null", e) == TENDO_OK && stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
           "a save to /dev/null writes to the device, which stays a device");
    { /* /dev/stdout on a pipe, in a child whose stdout is one */
        int p[2];
        char buf[4096];
        ssize_t n, total = 0;
        if (pipe(p) != 0 || (pid = fork()) < 0)
            bail("fork failed");
        if (pid == 0) {
            close(p[0]);
            if (dup2(p[1], 1) < 0)
                _exit(3);
            _exit(tendo_npy_save("/dev/stdout", e) == TENDO_OK ? 0 : 2);
        }
        close(p[1]);
        while ((n = read(p[0], buf, sizeof buf)) > 0)
            total += n;
        close(p[0]);
        waitpid(pid, &status, 0);
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && total == (ssize_t)reg.st_size,
           "a save to /dev/stdout on a pipe writes the file down the pipe (%ld bytes)", (long)total);
    }
    if (!getcwd(cwd, sizeof cwd) || chdir(dir) != 0)
        bail("chdir failed");
    ok(tendo_npy_save("", e) == TENDO_ERR_INVALID_ARG && strstr(tendo_error_message(tendo_last_error()), "empty path") &&
           !dir_has(".", ".tmp-"),
       "an empty path: TENDO_ERR_INVALID_ARG \"empty path\", nothing written (%s)",
       tendo_error_message(tendo_last_error()));
    if (chdir(cwd) != 0)
        bail("chdir back failed");
    ok(tendo_npy_save(dir, e) == TENDO_ERR_IO && strstr(tendo_error_message(tendo_last_error()), "is a directory"),
       "a directory: TENDO_ERR_IO \"is a directory\" (%s)", tendo_error_message(tendo_last_error()));
    ok(tendo_npy_save(sub, e) == TENDO_ERR_IO && strstr(tendo_error_message(tendo_last_error()), "is a directory") &&
           !dir_has(dir, ".tmp-") && access(sub, F_OK) != 0,
       "a name ending in '/': refused before anything is written (%s)", tendo_error_message(tendo_last_error()));
    snprintf(below, sizeof below, "%s/x.npy", path_of("regular.npy"));
    ok(tendo_npy_save(below, e) == TENDO_ERR_IO && strstr(tendo_error_message(tendo_last_error()), "Not a directory"),
       "a name below a regular file: TENDO_ERR_IO (%s)", tendo_error_message(tendo_last_error()));
    ok(!tendo_npy_load(dir) && tendo_error_status(tendo_last_error()) == TENDO_ERR_IO &&
           strstr(tendo_error_message(tendo_last_error()), "not a regular file"),
       "loading a directory: TENDO_ERR_IO \"not a regular file\" (%s)", tendo_error_message(tendo_last_error()));
    ok(!tendo_npy_load("/dev/null") && tendo_error_status(tendo_last_error()) == TENDO_ERR_IO,
       "loading a device: TENDO_ERR_IO (%s)", tendo_error_message(tendo_last_error()));
    unlink(fifo);
    tendo_tensor_free(e);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "resave"))
        return resave(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "check"))
        return check_numpy(argv[2]);
    if (!mkdtemp(dir))
        bail("mkdtemp failed");
    test_roundtrip();
    test_crafted();
    test_malformed();
    test_kinds();
    test_save_targets();
    {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            diag("could not remove %s", dir);
    }
    return done_testing();
}
