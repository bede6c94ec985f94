/* A network tripwire preloaded into every process of a test (LD_PRELOAD): name lookups and
 * connections to internet addresses are logged to $QUIRE_NETLOG and refused. It sits below
 * Python, so it also sees native threads (ONNX Runtime, llama.cpp, Qt) that Python's socket
 * module never hears of. Unix-domain sockets (the parse workers' pipes) pass through. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void note(const char *call, const char *detail) {
    const char *path = getenv("QUIRE_NETLOG");
    if (path == NULL) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[600];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int n = snprintf(line, sizeof line, "%ld.%03ld pid %d: %s(%s)\n", (long)now.tv_sec, now.tv_nsec / 1000000L,
                     (int)getpid(), call, detail ? detail : "");
    if (n > 0) {
        ssize_t ignored = write(fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
        (void)ignored;
    }
    close(fd);
}

static int is_internet(const struct sockaddr *addr) {
    return addr != NULL && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6);
}

static void describe(const struct sockaddr *addr, char *out, size_t size) {
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)addr;
        inet_ntop(AF_INET, &in4->sin_addr, host, sizeof host);
        port = ntohs(in4->sin_port);
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
    }
    snprintf(out, size, "%s port %d", host, port);
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res) {
    char detail[512];
    snprintf(detail, sizeof detail, "%s, %s", node ? node : "NULL", service ? service : "NULL");
    note("getaddrinfo", detail);
    (void)hints;
    (void)res;
    return EAI_FAIL;
}

struct hostent *gethostbyname(const char *name) {
    note("gethostbyname", name);
    h_errno = NO_RECOVERY;
    return NULL;
}

struct hostent *gethostbyname2(const char *name, int family) {
    (void)family;
    note("gethostbyname2", name);
    h_errno = NO_RECOVERY;
    return NULL;
}

int gethostbyname_r(const char *name, struct hostent *ret, char *buf, size_t buflen, struct hostent **result,
                    int *h_errnop) {
    (void)ret;
    (void)buf;
    (void)buflen;
    note("gethostbyname_r", name);
    *result = NULL;
    *h_errnop = NO_RECOVERY;
    return ENOENT;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real_connect)(int, const struct sockaddr *, socklen_t);
    if (is_internet(addr)) {
        char detail[128];
        describe(addr, detail, sizeof detail);
        note("connect", detail);
        errno = ENETUNREACH;
        return -1;
    }
    if (real_connect == NULL) real_connect = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
    return real_connect(fd, addr, len);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *addr, socklen_t alen) {
    static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
    if (is_internet(addr)) {
        char detail[128];
        describe(addr, detail, sizeof detail);
        note("sendto", detail);
        errno = ENETUNREACH;
        return -1;
    }
    if (real_sendto == NULL)
        real_sendto = (ssize_t (*)(int, const void *, size_t, int, const struct sockaddr *, socklen_t))dlsym(
            RTLD_NEXT, "sendto");
    return real_sendto(fd, buf, len, flags, addr, alen);
}
