// Loaded before the Node peer's index.js (node --import): its server listens on
// 127.0.0.1 at $REALIO_PORT instead of every interface at the port it hard-codes,
// without a change to the peer's own file. Cluster workers load it too.
import net from 'node:net';

const port = Number(process.env.REALIO_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('REALIO_PORT must name a port');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const done = args.find((arg) => typeof arg === 'function');
  return listen.call(this, port, '127.0.0.1', done);
};
