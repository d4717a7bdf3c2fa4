/* tests/unit/fe_test.h — helpers shared by the JSON and safetensors tests
 * (implemented in test_json.c). */
#ifndef DLCC_TESTS_FE_TEST_H
#define DLCC_TESTS_FE_TEST_H

#include <stddef.h>

#include "frontend/frontend.h"

/* cmocka setup/teardown: *state becomes a fresh temporary folder (char *),
 * removed with its files afterwards. */
int fe_test_tmpdir_setup(void **state);
int fe_test_tmpdir_teardown(void **state);
/* Writes dir/name; returns the malloc'd path. */
char *fe_test_write(const char *dir, const char *name, const void *data, size_t len);
/* Writes a safetensors file from a header text and data bytes. */
char *fe_test_write_st(const char *dir, const char *name, const char *header, const void *data, size_t len);

/* The safetensors test group; returns the number of failures. */
int fe_test_safetensors(void);

#endif
