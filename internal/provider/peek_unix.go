//go:build unix

package provider

import (
	"net"
	"syscall"
)

// peerQuiet reports whether conn's peer has sent nothing that is waiting to be
// read and has not closed its side: a look at the socket (MSG_PEEK, MSG_DONTWAIT)
// that neither blocks nor takes anything. Anything else, or a connection that
// cannot be looked at, is false.
func peerQuiet(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	quiet := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		quiet = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && quiet
}
