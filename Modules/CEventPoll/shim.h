// Linux interfaces the event loop needs that Swift's Glibc module leaves out: epoll for its
// selector, eventfd to wake it from other threads, and naming its thread.
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

// A GNU extension, declared only under _GNU_SOURCE (which Glibc's module was built without).
int pthread_setname_np(pthread_t thread, const char *name);
