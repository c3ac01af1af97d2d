#ifndef HERALD_CRABBITMQ_SHIM_H
#define HERALD_CRABBITMQ_SHIM_H
// librabbitmq-c 0.11 keeps its headers at the top level (newer releases move them to rabbitmq-c/).
// Only HeraldAMQP imports this module.
#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <amqp_ssl_socket.h>

// amqp_login is variadic (the SASL arguments follow the method), which Swift cannot call.
// This fixes the PLAIN method's two string arguments.
static inline amqp_rpc_reply_t herald_amqp_login_plain(amqp_connection_state_t state, const char *vhost,
                                                       int channel_max, int frame_max, int heartbeat,
                                                       const char *user, const char *password) {
    return amqp_login(state, vhost, channel_max, frame_max, heartbeat, AMQP_SASL_METHOD_PLAIN, user, password);
}

// amqp_login_with_properties is variadic as well. Herald sends client properties (connection_name,
// and the consumer_cancel_notify / connection.blocked capabilities that rabbitmq-c does not announce
// by default), so it needs this typed PLAIN variant too.
static inline amqp_rpc_reply_t herald_amqp_login_plain_with_properties(
    amqp_connection_state_t state, const char *vhost, int channel_max, int frame_max, int heartbeat,
    const amqp_table_t *properties, const char *user, const char *password) {
    return amqp_login_with_properties(state, vhost, channel_max, frame_max, heartbeat, properties,
                                      AMQP_SASL_METHOD_PLAIN, user, password);
}

#endif
