"""bot.ports: the sockets `folio serve` opens before anything slow (issue 32), and what it says when it cannot."""

from __future__ import annotations

import os
import socket

import pytest

from bot.config import Settings
from bot.errors import ConfigurationError
from bot.ports import Listeners, listening_socket


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, slack_bot_token="xoxb-1", slack_signing_secret="s", **values)


def test_a_port_in_use_is_refused_naming_the_setting_to_change() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigurationError) as refused:
            listening_socket("127.0.0.1", port, setting="FOLIO_METRICS_PORT")
    assert str(refused.value) == f"Port {port} on 127.0.0.1 is in use: set FOLIO_METRICS_PORT to a free port."


def test_the_socket_takes_connections_before_anything_serves_it() -> None:
    sock = listening_socket("localhost", 0, setting="PORT")  # a name with both families: its IPv4 address
    with sock, socket.create_connection(("127.0.0.1", sock.getsockname()[1]), timeout=2):
        pass  # connected: the kernel holds it in the queue until a server accepts


def test_http_mode_listens_on_port_and_metrics_apart_socket_mode_only_where_something_serves() -> None:
    both = Listeners.open(settings(folio_metrics_port=_free_port()), host="127.0.0.1", port=0)
    port = _free_port()  # one port for both: /metrics beside the events
    shared = Listeners.open(settings(folio_metrics_port=port), host="127.0.0.1", port=port)
    socket_mode = Listeners.open(settings(slack_app_token="xapp-1"), host="127.0.0.1", port=0)
    try:
        assert both.events is not None and both.metrics is not None
        assert shared.events is not None and shared.metrics is None  # /metrics is served beside the events
        assert socket_mode.events is None and socket_mode.metrics is None  # nothing listens on PORT
        inherited = Listeners.inherited(",".join(str(os.dup(fd)) for fd in both.fds()))  # as a worker gets them
        assert (inherited.port(0), inherited.metrics.getsockname()) == (both.port(0), both.metrics.getsockname())
        inherited.close()
    finally:
        for listeners in (both, shared, socket_mode):
            listeners.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
