/* Unit tests of converting the program's getaddrinfo/gethostbyname answers for mdns_note_program. */
#include <criterion/criterion.h>
#include <netdb.h>

#include "helpers.h"
#include "multidns/answer.h"

/* Built by hand, not by the real getaddrinfo: tests never depend on the host's resolver. */
Test(answer, addrinfo_order_kept_repeats_and_ports_dropped) {
  struct sockaddr_storage a = t_addr("192.0.2.1"), b = t_addr("2001:db8::1"), u = {0};
  ((struct sockaddr_in *)&a)->sin_port = htons(80);
  struct addrinfo ai[5];
  memset(ai, 0, sizeof ai);
  ai[0] = (struct addrinfo){.ai_family = AF_INET6,
                            .ai_socktype = SOCK_STREAM,
                            .ai_addrlen = sizeof(struct sockaddr_in6),
                            .ai_addr = (struct sockaddr *)&b};
  ai[1] = (struct addrinfo){.ai_family = AF_INET6,
                            .ai_socktype = SOCK_DGRAM,
                            .ai_addrlen = sizeof(struct sockaddr_in6),
                            .ai_addr = (struct sockaddr *)&b};
  ai[2] = (struct addrinfo){.ai_family = AF_UNIX, .ai_addrlen = sizeof u, .ai_addr = (struct sockaddr *)&u};
  ai[3] = (struct addrinfo){.ai_family = AF_INET,
                            .ai_socktype = SOCK_STREAM,
                            .ai_addrlen = sizeof(struct sockaddr_in),
                            .ai_addr = (struct sockaddr *)&a};
  ai[4] = (struct addrinfo){.ai_family = AF_INET, .ai_addrlen = 2, .ai_addr = (struct sockaddr *)&a};
  for (int i = 0; i < 4; i++)
    ai[i].ai_next = &ai[i + 1];
  struct sockaddr_storage out[8];
  cr_assert_eq(mdns_answer_from_addrinfo(ai, out, 8), 2);
  cr_assert_str_eq(t_str(&out[0]), "2001:db8::1");
  cr_assert_str_eq(t_str(&out[1]), "192.0.2.1");
  cr_assert_eq(((struct sockaddr_in *)&out[1])->sin_port, 0);
  cr_assert_eq(mdns_answer_from_addrinfo(ai, out, 1), 1, "max honoured");
  cr_assert_eq(mdns_answer_from_addrinfo(NULL, out, 8), 0);
}

Test(answer, hostent_both_families) {
  struct in_addr a4[2];
  inet_pton(AF_INET, "192.0.2.1", &a4[0]);
  inet_pton(AF_INET, "192.0.2.2", &a4[1]);
  char *list4[] = {(char *)&a4[0], (char *)&a4[1], (char *)&a4[0], NULL};
  struct hostent he = {.h_name = (char *)"h.test", .h_addrtype = AF_INET, .h_length = 4, .h_addr_list = list4};
  struct sockaddr_storage out[8];
  cr_assert_eq(mdns_answer_from_hostent(&he, out, 8), 2);
  cr_assert_str_eq(t_str(&out[1]), "192.0.2.2");
  struct in6_addr a6;
  inet_pton(AF_INET6, "2001:db8::5", &a6);
  char *list6[] = {(char *)&a6, NULL};
  he = (struct hostent){.h_addrtype = AF_INET6, .h_length = 16, .h_addr_list = list6};
  cr_assert_eq(mdns_answer_from_hostent(&he, out, 8), 1);
  cr_assert_str_eq(t_str(&out[0]), "2001:db8::5");
  he.h_length = 4; /* inconsistent: nothing, rather than reading past the address */
  cr_assert_eq(mdns_answer_from_hostent(&he, out, 8), 0);
  cr_assert_eq(mdns_answer_from_hostent(NULL, out, 8), 0);
}
