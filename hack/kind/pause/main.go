// Command pause is the pod sandbox's process of the locally built kind node
// image (hack/kind-images.sh): there is no registry here to pull
// registry.k8s.io/pause from. Like the upstream one it holds the pod's
// namespaces open, reaps the zombies it inherits as PID 1 of a pod that
// shares its PID namespace, and exits on SIGINT or SIGTERM.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
