"""Loopback TCP proxies whose forwarding the fault campaign cuts and refuses.

One asyncio process serves several named routes (`--route NAME:LISTEN_PORT:UPSTREAM_PORT[,PORT…]`)
and a control port that takes one command per line and answers `ok` (or `error …`):

    cut NAME       stop forwarding: connections stay open, nothing moves either way, new
                   connections are accepted and held (a network cut: no RST, no FIN)
    refuse NAME    close the listener (new connections are refused) and reset every open one
    restore NAME   forward again (held data and held connections go on)
    status         one line per route: name, state, open connections

With several upstream ports (a RabbitMQ cluster), each new connection goes to the first one
that accepts, starting at the next in turn. Everything listens on 127.0.0.1 only.
"""

import argparse
import asyncio
import itertools
import sys


class Route:
    def __init__(self, name, port, upstreams):
        self.name = name
        self.port = port
        self.upstreams = upstreams
        self.turn = itertools.count()
        self.state = "open"
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.server = None
        self.connections = set()

    async def start(self):
        self.server = await asyncio.start_server(self.accept, "127.0.0.1", self.port, reuse_address=True, backlog=512)

    async def accept(self, reader, writer):
        upstream_writer = None
        self.connections.add(writer)
        try:
            await self.flowing.wait()
            start = next(self.turn)
            for i in range(len(self.upstreams)):
                port = self.upstreams[(start + i) % len(self.upstreams)]
                try:
                    up_reader, upstream_writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
                    break
                except (OSError, asyncio.TimeoutError):
                    continue
            if upstream_writer is None:
                return
            self.connections.add(upstream_writer)
            await asyncio.gather(self.pump(reader, upstream_writer), self.pump(up_reader, writer), return_exceptions=True)
        finally:
            for w in (writer, upstream_writer):
                if w is not None:
                    self.connections.discard(w)
                    try:
                        w.close()
                    except Exception:
                        pass

    async def pump(self, reader, writer):
        try:
            while True:
                await self.flowing.wait()
                data = await reader.read(65536)
                if not data:
                    break
                await self.flowing.wait()
                writer.write(data)
                await writer.drain()
        finally:
            # One side ended: end the other, as a TCP connection through a router would.
            try:
                writer.close()
            except Exception:
                pass

    async def cut(self):
        self.state = "cut"
        self.flowing.clear()

    async def refuse(self):
        self.state = "refused"
        if self.server is not None:
            self.server.close()
            self.server = None
        for w in list(self.connections):
            try:
                w.transport.abort()
            except Exception:
                pass
        self.connections.clear()

    async def restore(self):
        if self.server is None:
            await self.start()
        self.state = "open"
        self.flowing.set()


async def control(routes, reader, writer):
    try:
        while line := await reader.readline():
            words = line.decode().split()
            if not words:
                continue
            command, name = words[0], words[1] if len(words) > 1 else None
            if command == "status":
                for r in routes.values():
                    writer.write(f"{r.name} {r.state} {len(r.connections)}\n".encode())
                writer.write(b"ok\n")
            elif command in ("cut", "refuse", "restore") and name in routes:
                await getattr(routes[name], command)()
                writer.write(b"ok\n")
            else:
                writer.write(f"error: unknown command {line.decode().strip()!r}\n".encode())
            await writer.drain()
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--control", type=int, required=True, help="control port")
    parser.add_argument("--route", action="append", default=[], help="NAME:LISTEN_PORT:UPSTREAM_PORT[,PORT…]")
    args = parser.parse_args()
    routes = {}
    for spec in args.route:
        name, port, upstreams = spec.split(":")
        routes[name] = Route(name, int(port), [int(p) for p in upstreams.split(",")])
    for r in routes.values():
        await r.start()
    server = await asyncio.start_server(lambda rd, wr: control(routes, rd, wr), "127.0.0.1", args.control, reuse_address=True)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
