package event

// A network fault on the log is a system beat with Code CodeNetOn when it
// begins and CodeNetOff when it ends, on the node it touches:
// "network #3 on: latency 50ms±10ms both · w01 ⇄ node 0". The number ties
// the two together; every view reads the faults in force from these.
const (
	CodeNetOn  = "net"
	CodeNetOff = "net-off"
)
