/* The pods' infrastructure ("pause") container of the test cluster: holds the pod's namespaces and waits for a
 * signal. No image can be pulled here, so scripts/kube-up.sh builds this with gcc -static and imports it. */
#include <signal.h>
#include <unistd.h>

static void stop(int sig) {
    (void)sig;
    _exit(0);
}

int main(void) {
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    for (;;) pause();
}
