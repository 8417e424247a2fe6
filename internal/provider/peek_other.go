//go:build !unix

package provider

import "net"

// peerQuiet cannot look at a socket here, so no message goes in one write.
func peerQuiet(net.Conn) bool { return false }
