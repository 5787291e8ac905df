module example.com/ledgerline

go 1.22
