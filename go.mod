module servelab

go 1.26
