-- A product's `type` as its create named it (`good` or `service`); every product before was a service.
ALTER TABLE "products" ADD COLUMN "type" TEXT NOT NULL DEFAULT 'service';
