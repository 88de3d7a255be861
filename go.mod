module msgbench

go 1.26
