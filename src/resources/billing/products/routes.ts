import { route } from '../../../kernel/route';
import { defaultPrices } from '../prices/service';
import { OBJECT } from './serializer';
import { createProduct, deleteProduct, listProducts, retrieveProduct, searchProducts, updateProduct, updatesAlone } from './service';

const one = { object: OBJECT };
const many = { object: OBJECT, list: true };
const found = { object: OBJECT, search: true };

export const routes = [
  route('get', '/v1/products', 'GetProducts', many, listProducts),
  route('post', '/v1/products', 'PostProducts', one, (ctx) => createProduct(ctx, defaultPrices)),
  route('get', '/v1/products/search', 'GetProductsSearch', found, searchProducts),
  route('get', '/v1/products/{product}', 'GetProductsProduct', one, retrieveProduct),
  route('post', '/v1/products/{product}', 'PostProductsProduct', one, updateProduct, { sqlOnly: true, oneStatement: updatesAlone }),
  route('delete', '/v1/products/{product}', 'DeleteProductsProduct', one, deleteProduct),
];
