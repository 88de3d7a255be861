/* Loopback sockets for the tests that exchange real datagrams. Addresses are in 127.0.10.0/24,
 * ports chosen by the kernel, so tests never collide with a node on port 3610. */
#ifndef ECHONET_TEST_SOCKETS_H
#define ECHONET_TEST_SOCKETS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

static inline struct in_addr test_addr(const char *s) {
    struct in_addr a;
    inet_pton(AF_INET, s, &a);
    return a;
}

/* A UDP socket bound to addr:port (port 0: any); *port gets the port bound. */
static inline int test_socket(const char *addr, uint16_t *port) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(*port), .sin_addr = test_addr(addr)};
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        return -1;
    socklen_t len = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &len);
    *port = ntohs(sa.sin_port);
    struct timeval tv = {.tv_sec = 2}; /* a test that waits for nothing fails, never hangs */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static inline void test_send(int fd, const char *addr, uint16_t port, const void *buf, size_t len) {
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = test_addr(addr)};
    sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof to);
}

#endif
