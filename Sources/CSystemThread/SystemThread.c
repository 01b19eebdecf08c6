#define _GNU_SOURCE
#include "CSystemThread.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

int pianola_current_thread_id(void) { return (int)gettid(); }

void pianola_set_thread_name(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}
